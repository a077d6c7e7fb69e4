"""The quality harness: metrics, baselines and generator on tiny hand-made data, plus one smoke run
of the whole ``quality`` benchmark (no figure is asserted: they are measurements)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.quality.baselines import BM25Baseline, recent_turns, turn_line
from benchmarks.quality.bm25 import BM25, tokenize
from benchmarks.quality.dataset import Conversation, Dataset, Question, Session, Turn, from_dict, load, save
from benchmarks.quality.generator import GeneratorConfig, check, generate
from benchmarks.quality.metrics import ALL, aggregate, is_stale, score_pack
from elephantasm.tokens import get_token_counter
from tests.support.servers import REPO_ROOT

COUNT = get_token_counter("o200k_base")


def _turn(n: int, role: str, content: str) -> Turn:
    return Turn(f"e{n}", role, content, f"2025-01-01T10:{n:02d}:00+00:00")


TURNS = [
    _turn(0, "user", "Can you recommend a podcast about space exploration?"),
    _turn(1, "assistant", "Try one about the history of rockets and orbital missions."),
    _turn(2, "user", "I live in Tallinn, right by the old harbour."),
    _turn(3, "assistant", "That sounds like a nice setup."),
    _turn(4, "user", "The weather is rainy again, I will stay inside and read."),
    _turn(5, "user", "Big news: I just moved to Porto and I'm still unpacking boxes."),
]
QUESTION = Question("q1", "c1", "updated", "Which city does the user live in now?", ["e5"], "Porto", ["Tallinn"])
DATASET = Dataset([Conversation("c1", [Session("s1", TURNS[:4]), Session("s2", TURNS[4:])])], [QUESTION])


def test_bm25_ranks_the_matching_turn_first() -> None:
    ranked = BM25Baseline(TURNS).ranked("What podcast about space would the user like?")
    assert ranked[0].event_id == "e0"
    # "lived"/"live"/"lives" meet under the light stemmer; stop words and the word "user" do not count.
    assert tokenize("Where has the user lived?") == tokenize("lives") == ["liv"]
    assert BM25(["a b", "c"]).ranking("zzz") == []


def test_recent_turns_respect_the_budget_exactly() -> None:
    for budget in range(0, 90, 3):
        pack = recent_turns(TURNS, budget, COUNT)
        assert pack.token_count == (COUNT(pack.context) if pack.context else 0) <= budget
        n = len(pack.event_ids)
        # A contiguous tail, oldest first, and the next older turn would not have fit.
        assert pack.event_ids == tuple(t.event_id for t in TURNS[len(TURNS) - n :])
        if n < len(TURNS):  # the next older turn (costed with its newline, as packed) would not fit
            assert sum(COUNT(turn_line(t) + "\n") for t in TURNS[len(TURNS) - n - 1 :]) > budget
    everything = recent_turns(TURNS, 10_000, COUNT)
    assert everything.context.splitlines()[0] == "- user: Can you recommend a podcast about space exploration?"


def test_bm25_pack_skips_what_does_not_fit_and_keeps_rank_order() -> None:
    bm25 = BM25Baseline(TURNS)
    ranked = [t.event_id for t in bm25.ranked("Which city does the user live in now? harbour")]
    full = bm25.pack("Which city does the user live in now? harbour", 10_000, COUNT)
    assert list(full.event_ids) == ranked
    small = bm25.pack("Which city does the user live in now? harbour", 20, COUNT)
    assert small.token_count <= 20 and set(small.event_ids) <= set(ranked)


def test_er_all_requires_all_evidence_er_any_one_and_reports_partial() -> None:
    two = Question("q2", "c1", "spread", "who?", ["e2", "e5"], "x")
    three = Question("q3", "c1", "spread", "what?", ["e0", "e1", "e3"], "y")
    one = Question("q4", "c1", "literal", "where?", ["e4"], "z")
    outcomes = [
        score_pack("s", two, 500, {"e2", "e5", "e0"}, "", 10),  # all: any ✓, all ✓
        score_pack("s", two, 500, {"e2"}, "", 30),  # one of two: any ✓, all ✗
        score_pack("s", three, 500, {"e1", "e3", "e9"}, "", 20),  # two of three: any ✓, all ✗
        score_pack("s", one, 500, {"e2", "e5"}, "", 40),  # none: any ✗, all ✗
    ]
    assert [(o.any_cited, o.covered) for o in outcomes] == [(True, True), (True, False), (True, False), (False, False)]
    assert [o.partial for o in outcomes] == [1.0, 0.5, 2 / 3, 0.0]
    cells = aggregate(outcomes)
    assert (cells[("s", ALL, 500)].recall_any, cells[("s", ALL, 500)].recall) == (0.75, 0.25)
    assert (cells[("s", "spread", 500)].recall_any, cells[("s", "spread", 500)].recall) == (1.0, 1 / 3)
    assert (cells[("s", "literal", 500)].recall_any, cells[("s", "literal", 500)].recall) == (0.0, 0.0)
    assert cells[("s", ALL, 500)].partial == pytest.approx((1 + 0.5 + 2 / 3 + 0) / 4)
    assert cells[("s", "spread", 500)].mean_tokens == 20
    assert cells[("s", ALL, 500)].stale_rate is None  # no superseded values: cannot be stale


def test_stale_detection_is_case_insensitive_whole_words() -> None:
    assert is_stale("- user: I live in TALLINN.", ["Tallinn"])
    assert not is_stale("- user: Tallinnese food", ["Tallinn"])
    assert is_stale("moved on March 14, then", ["March 14"]) and not is_stale("March 142", ["March 14"])
    out = score_pack("s", QUESTION, 100, {"e5"}, "- user: I live in Tallinn\n- user: moved to Porto", 12)
    assert out.covered and out.stale is True
    assert aggregate([out])[("s", ALL, 100)].stale_rate == 1.0


def test_dataset_round_trips_json_and_jsonl(tmp_path: Path) -> None:
    for name in ("d.json", "d.jsonl"):
        save(DATASET, tmp_path / name)
        assert load(tmp_path / name) == DATASET
    raw = DATASET.to_dict()
    raw["questions"][0]["evidence_event_ids"] = ["nope"]
    with pytest.raises(ValueError, match="evidence"):
        from_dict(raw)


def test_generator_is_deterministic_and_well_formed() -> None:
    cfg = GeneratorConfig(
        seed=3, conversations=2, sessions=6, turns_per_session=12, facts=8, updates=3, paraphrases=2, spreads=2
    )
    first, second = generate(cfg), generate(cfg)
    assert first.dumps() == second.dumps()
    assert generate(GeneratorConfig(seed=4, conversations=2, sessions=6, turns_per_session=12)).dumps() != first.dumps()
    check(first)  # every answer only in its evidence; no stale value in evidence
    turns = {t.event_id: t for c in first.conversations for t in c.turns()}
    updated = [q for q in first.questions if q.kind == "updated"]
    assert len(updated) == 2 * 3 and len(first.questions) == 2 * (8 + 2)
    assert sum(q.kind == "paraphrase" for q in first.questions) == 2 * 2
    for q in updated:
        (newest,) = q.evidence_event_ids
        older = [t for t in turns.values() if any(v.lower() in t.content.lower() for v in q.stale_values)]
        assert older and all(t.occurred_at < turns[newest].occurred_at for t in older)
    json.loads(first.dumps())


def test_quality_benchmark_smoke(tmp_path: Path) -> None:
    """``python -m benchmarks quality --size tiny``: ingest, dream, packs and baselines end to end."""
    out = tmp_path / "RESULTS.md"
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "quality", "--size", "tiny", "--out", str(out)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = out.read_text()
    assert "<!-- section:quality -->" in text
    for metric in ("ER_any", "ER_all"):
        for kind in ("all (5)", "literal (2)", "paraphrase (1)", "spread (1)", "updated (1)"):
            assert f"| {metric} | {kind} | elephantasm |" in text
    for system in ("recent turns", "bm25 turns", "dense turns"):
        assert f"| {system} |" in text
    assert "embedder (server and dense baseline)" in text
    assert "command: `python -m benchmarks quality --size tiny" in text
