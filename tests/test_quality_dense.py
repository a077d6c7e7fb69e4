"""The dense baseline: the project's configured embedder over raw turns, greedily packed under the
same exact token budget as every other system."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from benchmarks.quality.baselines import turn_line
from benchmarks.quality.dataset import Turn
from benchmarks.quality.dense import DenseBaseline, SyncEmbedder, configured_embedder
from elephantasm.llm.factory import build_embedder
from elephantasm.settings import Settings
from elephantasm.tokens import get_token_counter

COUNT = get_token_counter("o200k_base")
TURNS = [
    Turn(f"e{n}", role, content, f"2025-01-01T10:{n:02d}:00+00:00")
    for n, (role, content) in enumerate(
        [
            ("user", "ugh train delayed again, standing on the platform"),
            ("assistant", "That sounds frustrating. Do you have a podcast to pass the time?"),
            ("user", "My sister Ingrid adopted a grey kitten called Pebble."),
            ("user", "can you explain what a hash map is in simple terms"),
            ("assistant", "It's like a coat check: you hand over a key and find your item again instantly."),
            ("user", "skipped the gym again lol, its been five days"),
            ("assistant", "One day off is fine, five is a streak of a different kind."),
        ]
    )
]


@pytest.fixture(scope="module")
def embedder() -> Iterator[SyncEmbedder]:
    sync = SyncEmbedder(configured_embedder("hash"))
    yield sync
    sync.close()


def test_dense_baseline_ranks_the_obviously_relevant_turn_first(embedder: SyncEmbedder) -> None:
    dense = DenseBaseline(TURNS, embedder)
    assert dense.ranked("What is the name of the kitten the user's sister adopted?")[0].event_id == "e2"
    assert dense.ranked("explain a hash map")[0].event_id == "e3"
    assert sorted(t.event_id for t in dense.ranked("anything")) == sorted(t.event_id for t in TURNS)


def test_dense_baseline_respects_the_budget_exactly(embedder: SyncEmbedder) -> None:
    dense = DenseBaseline(TURNS, embedder)
    query = "What is the name of the kitten the user's sister adopted?"
    ranked = dense.ranked(query)
    for budget in range(0, 140, 4):
        pack = dense.pack(query, budget, COUNT)
        assert pack.token_count == (COUNT(pack.context) if pack.context else 0) <= budget
        by_id = {t.event_id: t for t in TURNS}
        assert pack.context.splitlines() == [turn_line(by_id[e]) for e in pack.event_ids]
        # Greedy in rank order: every turn left out would not have fit next to what was taken.
        order = [t.event_id for t in ranked]
        assert list(pack.event_ids) == [e for e in order if e in pack.event_ids]
        used = sum(COUNT(turn_line(t) + "\n") for t in ranked if t.event_id in pack.event_ids)
        assert all(used + COUNT(turn_line(t) + "\n") > budget for t in ranked if t.event_id not in pack.event_ids)
    everything = dense.pack(query, 10_000, COUNT)
    assert everything.event_ids[0] == "e2" and len(everything.event_ids) == len(TURNS)


def test_dense_baseline_uses_the_configured_embedder() -> None:
    """No name: whatever the server would build from the same settings (the project default or
    ELEPHANTASM_EMBEDDER); a name picks that embedder the project's own way."""
    assert configured_embedder(None).name == build_embedder(Settings()).name
    assert configured_embedder("hash").name == build_embedder(Settings(embedder="hash")).name
    with pytest.raises(ValueError, match="EMBEDDER"):
        configured_embedder("no-such-embedder")


def test_an_unknown_embedder_name_is_refused_before_any_server_starts(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks.quality.__main__ import main

    with pytest.raises(SystemExit) as exited:
        main(["--size", "tiny", "--embedder", "no-such-embedder", "--out", "/dev/null"])
    assert exited.value.code == 2 and "no-such-embedder" in capsys.readouterr().err


def test_baselines_only_run_needs_no_server(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from benchmarks.quality.__main__ import main

    out = tmp_path / "RESULTS.md"
    assert main(["--size", "tiny", "--baselines-only", "--embedder", "hash", "--name", "q", "--out", str(out)]) == 0
    text = out.read_text()
    for system in ("recent turns", "bm25 turns", "dense turns"):
        assert f"| ER_any | paraphrase (1) | {system} |" in text and f"| ER_all | spread (1) | {system} |" in text
    assert "| elephantasm |" not in text and "embedder (dense baseline) hash-v1" in text
