"""Reusing the longest cached prefix gives exactly what recomputing the whole prompt gives (logits
and greedy tokens), for a snapshot of an older pack, the live cache of a conversation, and a
conversation kept in memory; and a restore that does not spare the work it should is caught."""

from __future__ import annotations

import uuid

import numpy as np
import pytest

from elephantasm.domain.kv.prefix_index import common_prefix
from elephantasm.domain.kv.snapshot import decode_snapshot
from elephantasm.local.engine import LocalEngine
from elephantasm.local.sampling import Sampling
from elephantasm.observability import metrics
from elephantasm.services.kv.chat import ChatPlan, run_chat
from elephantasm.services.kv.prefix import PackPrompt
from elephantasm.services.kv.reuse import Primed, Prompt, Source, prime
from elephantasm.services.kv.snapshots import header, make_prefix
from tests.local.conftest import system_prompt

GREEDY = Sampling(temperature=0.0, max_tokens=16)
Q1 = {"role": "user", "content": "Which city do I live in?"}
Q2 = {"role": "user", "content": "And what is my cat called?"}


def _prompt(engine: LocalEngine, system: str, turns: list[dict[str, str]]) -> Prompt:
    prefix_text, suffix_text = engine.split_prompt(system, turns)
    prefix = make_prefix(engine, prefix_text)
    return Prompt(prefix.tokens + engine.tokenize_suffix(suffix_text), len(prefix.tokens))


def _run(
    engine: LocalEngine, owner: object, prompt: Prompt, source: Source | None = None
) -> tuple[Primed, np.ndarray, list[int]]:
    """Prime (with ``source`` if any, else whatever the engine offers), then the logits and reply."""
    with engine.lock:
        primed = prime(engine, owner, prompt, source, keep=None)
        logits = engine.logits()
        return primed, logits, engine.generate(GREEDY).tokens


def _recompute(engine: LocalEngine, prompt: Prompt) -> tuple[np.ndarray, list[int]]:
    with engine.lock:
        primed = prime(engine, None, prompt, None, keep=None, reuse=False)
        assert primed.status == "off" and primed.prefilled == len(prompt.tokens)
        logits = engine.logits()
        return logits, engine.generate(GREEDY).tokens


def _snapshot_of(engine: LocalEngine, system: str) -> Source:
    """A snapshot of ``system``'s prefix as a disk source would be (tokens from its header)."""
    prefix_text, _ = engine.split_prompt(system, [])
    prefix = make_prefix(engine, prefix_text)
    with engine.lock:
        primed = prime(
            engine,
            None,
            Prompt(prefix.tokens, len(prefix.tokens)),
            None,
            lambda: header(engine, prefix, "fp"),
            reuse=False,
            need_logits=False,
            min_new=1,
        )
    meta, state = decode_snapshot(primed.blob or b"")
    return Source("snapshot", meta["tokens"], 0, state)


def test_older_pack_snapshot_restores_its_common_prefix_exactly(engine: LocalEngine) -> None:
    old = _snapshot_of(engine, system_prompt(10))
    prompt = _prompt(engine, system_prompt(), [Q1])  # the pack grew by six facts at its end
    shared = common_prefix(old.tokens, prompt.tokens)
    assert 100 < shared < prompt.n_prefix
    reference = _recompute(engine, prompt)

    old.claim = prompt.reusable(shared)
    primed, logits, tokens = _run(engine, "org", prompt, old)
    assert (primed.status, primed.restored, primed.prefilled) == ("prefix", shared, len(prompt.tokens) - shared)
    assert np.array_equal(logits, reference[0]), "bit-identical next-token logits"
    assert tokens == reference[1] and len(tokens) > 3


def test_conversation_continues_from_the_live_cache_and_from_memory(engine: LocalEngine) -> None:
    first = _prompt(engine, system_prompt(8), [Q1])
    primed, _, reply = _run(engine, "org-a", first)
    assert primed.status in {"miss", "hit", "prefix"}
    answer = engine.llm.detokenize(reply).decode("utf-8", errors="replace")
    second = _prompt(engine, system_prompt(8), [Q1, {"role": "assistant", "content": answer}, Q2])
    reference = _recompute(engine, second)

    primed, _, _ = _run(engine, "org-a", first)  # turn 1 again, so the live cache is turn 1's
    primed, logits, tokens = _run(engine, "org-a", second)
    assert primed.source is not None and primed.source.kind == "live" and primed.status == "hit"
    assert primed.restored == len(first.tokens), "all of turn 1's prompt came from the cache"
    assert primed.prefilled == len(second.tokens) - len(first.tokens)
    assert np.array_equal(logits, reference[0]) and tokens == reference[1]

    other = _run(engine, "org-b", _prompt(engine, system_prompt(4), [Q2]))[0]  # another org displaces it
    assert other.source is None, "another owner's live cache is never offered"
    assert len(engine.states) >= 1
    primed, logits, tokens = _run(engine, "org-a", second)
    assert primed.source is not None and primed.source.kind == "memory"
    assert primed.restored == len(second.tokens) - 8, "turn 2's own prompt, kept when it was displaced"
    assert np.array_equal(logits, reference[0]) and tokens == reference[1]


def test_a_snapshot_captured_before_the_reply_and_encoded_after_it_restores_exactly(engine: LocalEngine) -> None:
    """A chat turn captures its new system-turn state before generating and writes the file after
    the reply: that file restores to exactly what a full prefill gives (logits and greedy tokens)."""
    system = system_prompt(12)
    prefix = make_prefix(engine, engine.split_prompt(system, [])[0])
    first = _prompt(engine, system, [Q1])
    with engine.lock:
        primed = prime(engine, "org-w", first, None, lambda: header(engine, prefix, "fp"))
        assert primed.status == "miss" and primed.kept is not None
        reply = engine.generate(GREEDY)  # the reply runs before the snapshot is encoded
    assert len(reply.tokens) > 3
    meta, state = decode_snapshot(primed.blob or b"")
    assert meta["tokens"] == prefix.tokens == first.tokens[: first.n_prefix]

    later = _prompt(engine, system, [Q2])
    reference = _recompute(engine, later)
    source = Source("snapshot", meta["tokens"], later.reusable(later.n_prefix), state)
    restored, logits, tokens = _run(engine, "org-x", later, source)
    assert (restored.status, restored.restored) == ("hit", later.n_prefix)
    assert restored.prefilled == len(later.tokens) - later.n_prefix
    assert np.array_equal(logits, reference[0]), "bit-identical next-token logits"
    assert tokens == reference[1]


def test_the_reply_evaluated_after_it_went_out_is_reused_exactly_by_the_next_turn(engine: LocalEngine) -> None:
    """After the reply, the turn puts the reply's tokens in the cache as a prompt batch; the next
    turn restores them from the live cache and equals a full prefill (logits and greedy tokens)."""
    system = system_prompt(8)
    prefix_text, suffix_text = engine.split_prompt(system, [Q1])
    prefix = make_prefix(engine, prefix_text)
    plan = ChatPlan(
        uuid.uuid4(),
        uuid.uuid4(),
        "s",
        [Q1],
        PackPrompt("fp", system, ""),
        prefix,
        suffix_text,
        engine.tokenize_suffix(suffix_text),
        GREEDY,
        None,
    )
    _, gen = run_chat(engine, plan, True, lambda kind, value: None, lambda: False)
    second = _prompt(engine, system, [Q1, {"role": "assistant", "content": gen.text}, Q2])
    reference = _recompute(engine, second)

    run_chat(
        engine, plan, True, lambda kind, value: None, lambda: False
    )  # turn 1 again: the live cache is turn 1 and its reply
    assert len(engine.held()) > len(plan.prompt.tokens) + len(gen.tokens) // 2, "the reply is in the cache"
    primed, logits, tokens = _run(engine, plan.org_id, second)
    assert primed.source is not None and primed.source.kind == "live" and primed.status == "hit"
    assert primed.restored > len(plan.prompt.tokens) + len(gen.tokens) // 2, "the reply was not evaluated again"
    assert primed.prefilled == len(second.tokens) - primed.restored
    assert np.array_equal(logits, reference[0]) and tokens == reference[1]


@pytest.fixture
def fresh_engine(engine: LocalEngine) -> LocalEngine:
    """An engine of its own: the test below turns restores off on it."""
    return LocalEngine(engine.path, n_ctx=1024, n_threads=1)


def test_a_restore_that_does_not_reuse_is_caught_and_restores_stop(fresh_engine: LocalEngine) -> None:
    engine = fresh_engine
    prompt = _prompt(engine, system_prompt(), [Q1])
    reference = _recompute(engine, prompt)
    wrong = _snapshot_of(engine, "You are a pirate. " + system_prompt(6))  # another prompt's state
    wrong.claim = prompt.n_prefix  # ...offered as the state of this prompt's system turn
    before = metrics.KV_RESTORE_CHECKS.labels(engine.model_name, "recomputed")._value.get()

    primed, logits, tokens = _run(engine, "org", prompt, wrong)
    assert primed.status == "recomputed"
    assert primed.prefilled > len(prompt.tokens) - prompt.n_prefix, "llama.cpp evaluated more than the suffix"
    assert np.array_equal(logits, reference[0]) and tokens == reference[1], "still the right answer"
    assert not engine.reuse_ok
    assert metrics.KV_RESTORE_CHECKS.labels(engine.model_name, "recomputed")._value.get() == before + 1

    offered = Source("snapshot", prompt.tokens, prompt.n_prefix, state=b"not a state")  # refused if tried
    again = _run(engine, "org", _prompt(engine, system_prompt(2), [Q1]), offered)[0]
    assert again.status == "off" and again.restored == 0, "no restore is tried on this model again"
