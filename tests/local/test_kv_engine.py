"""Restoring a pack prefix's KV state gives exactly the output of recomputing it, in this process
and in a fresh one; the store never hands a damaged file to the model."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from elephantasm.domain.kv.ranges import split_lines
from elephantasm.domain.kv.snapshot import decode_snapshot
from elephantasm.local.engine import LocalEngine
from elephantasm.local.errors import KVStateError
from elephantasm.local.sampling import Sampling
from elephantasm.local.store import SnapshotStore
from elephantasm.services.kv.reuse import Primed, Prompt, Source, prime
from elephantasm.services.kv.snapshots import Prefix, header, make_prefix
from tests.local.conftest import FACTS, state_of, system_prompt

TURNS = [{"role": "user", "content": "Which city do I live in, and what is my cat called?"}]
GREEDY = Sampling(temperature=0.0, max_tokens=24)


def _prime(engine: LocalEngine, prefix: Prefix, state: bytes | None, suffix: list[int] | None = None) -> Primed:
    """Put prefix (+ suffix) in the cache from ``state`` if given, keeping a snapshot of a computed prefix."""
    prompt = Prompt(prefix.tokens + (suffix or []), len(prefix.tokens))
    source = Source("snapshot", prefix.tokens, prompt.reusable(len(prefix.tokens)), state) if state else None
    return prime(
        engine, None, prompt, source, lambda: header(engine, prefix, "fp"), need_logits=bool(suffix), min_new=1
    )


def test_restored_equals_recomputed_in_process(engine: LocalEngine) -> None:
    prefix_text, suffix_text = engine.split_prompt(system_prompt(), TURNS)
    prefix = make_prefix(engine, prefix_text)
    assert 100 < len(prefix.tokens) < 600
    suffix = engine.tokenize_suffix(suffix_text)
    with engine.lock:  # a miss is a recompute: prefill the prefix, keep its state, then the question
        built = _prime(engine, prefix, None, suffix)
        assert built.status == "miss" and built.blob
        reference = engine.generate(GREEDY).tokens
    state = state_of(built.blob, prefix)
    assert state is not None
    with engine.lock:
        hit = _prime(engine, prefix, state, suffix)
        assert (hit.status, hit.restored, hit.prefilled) == ("hit", len(prefix.tokens), len(suffix))
        restored = engine.generate(GREEDY).tokens
    assert restored == reference and len(reference) > 3


def test_restored_equals_recomputed_in_a_fresh_process(engine: LocalEngine, tmp_path: Path) -> None:
    prefix_text, suffix_text = engine.split_prompt(system_prompt(6), TURNS)
    prefix = make_prefix(engine, prefix_text)
    with engine.lock:
        built = _prime(engine, prefix, None, engine.tokenize_suffix(suffix_text))
        reference = engine.generate(GREEDY).tokens
    org = uuid.uuid4()
    digest = SnapshotStore(tmp_path).write(org, built.blob or b"")
    script = textwrap.dedent(f"""
        import json, sys, uuid
        from pathlib import Path
        from elephantasm.local.engine import LocalEngine
        from elephantasm.local.model import default_model_path
        from elephantasm.local.sampling import Sampling
        from elephantasm.local.store import SnapshotStore
        from elephantasm.services.kv.reuse import Prompt, Source, prime
        from elephantasm.services.kv.snapshots import make_prefix
        from tests.local.conftest import state_of
        args = json.loads(sys.stdin.read())
        engine = LocalEngine(default_model_path(), n_ctx=1024, n_threads=1)
        prefix = make_prefix(engine, args["prefix"])
        state = state_of(SnapshotStore(Path(args["root"])).read(uuid.UUID(args["org"]), args["digest"]), prefix)
        prompt = Prompt(prefix.tokens + engine.tokenize_suffix(args["suffix"]), len(prefix.tokens))
        source = Source("snapshot", prefix.tokens, len(prefix.tokens), state)
        status = prime(engine, None, prompt, source, None).status
        print(json.dumps({{"status": status, "tokens": engine.generate(Sampling(max_tokens={GREEDY.max_tokens})).tokens}}))
    """)
    payload = json.dumps(
        {"prefix": prefix_text, "suffix": suffix_text, "root": str(tmp_path), "org": str(org), "digest": digest}
    )
    out = subprocess.run(
        [sys.executable, "-c", script], input=payload, capture_output=True, text=True, timeout=120, check=True
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result == {"status": "hit", "tokens": reference}


def test_corrupt_file_is_discarded_never_restored(engine: LocalEngine, tmp_path: Path) -> None:
    prefix_text, _ = engine.split_prompt(system_prompt(3), TURNS)
    prefix = make_prefix(engine, prefix_text)
    with engine.lock:
        built = _prime(engine, prefix, None)
    store, org = SnapshotStore(tmp_path), uuid.uuid4()
    digest = store.write(org, built.blob or b"")
    path = store.path(org, digest)
    damaged = bytearray(path.read_bytes())
    damaged[-100] ^= 0xFF
    path.write_bytes(bytes(damaged))
    assert store.read(org, digest) is None
    assert not path.exists(), "a file that fails its checksum is deleted"
    assert store.read(uuid.uuid4(), digest) is None, "another org's directory never serves it"


def test_snapshot_of_another_prefix_is_not_used(engine: LocalEngine) -> None:
    a, _ = engine.split_prompt(system_prompt(3), TURNS)
    b, _ = engine.split_prompt(system_prompt(4), TURNS)
    pa, pb = make_prefix(engine, a), make_prefix(engine, b)
    assert pa.key != pb.key
    with engine.lock:
        built = _prime(engine, pa, None)
    assert state_of(built.blob, pb) is None
    meta, _ = decode_snapshot(built.blob or b"")
    assert meta["tokens"] == pa.tokens and meta["model_digest"] == engine.model_digest


def test_state_for_a_smaller_context_or_other_kv_type_is_a_clear_error(engine: LocalEngine) -> None:
    prefix_text, _ = engine.split_prompt(system_prompt(), TURNS)
    prefix = make_prefix(engine, prefix_text)
    with engine.lock:
        state = state_of(_prime(engine, prefix, None).blob, prefix)
    small = LocalEngine(engine.path, n_ctx=128, n_threads=1)
    with pytest.raises(KVStateError, match=f"n_ctx={small.n_ctx}"):
        small.restore_state(state or b"", prefix.tokens)
    quantised = LocalEngine(engine.path, n_ctx=1024, n_threads=1, kv_type="q8_0")
    with pytest.raises(KVStateError, match="another KV type"):
        quantised.restore_state(state or b"", prefix.tokens)


def test_item_aware_pruning_removes_exactly_the_items_ranges(engine: LocalEngine) -> None:
    from benchmarks.kv_pruning import prune_items

    prefix_text, _ = engine.split_prompt(system_prompt(), TURNS)
    prefix = make_prefix(engine, prefix_text)
    items = [(str(i), fact, 1.0 - i / 100) for i, fact in enumerate(FACTS)]
    pruned = prune_items(engine, prefix, items, 0.25, n_probes=1)
    assert pruned["dropped_items"] == 4
    assert engine.llm.n_tokens >= pruned["tokens_after"]
    dropped = [line for line in split_lines(prefix.text) if any(f in line for f in FACTS[-4:])]
    removed = sum(len(engine.tokenize_suffix(line)) for line in dropped)
    assert pruned["tokens_before"] - pruned["tokens_after"] == removed, "the four lowest-scored lines, exactly"
    cert = pruned["certificate"]
    assert cert["reference"] == "recompute of the shorter pack" and 0.0 <= cert["top1_agreement"] <= 1.0
