"""Model-level memory: KV snapshots of pack prefixes on the local model (SmolLM2-135M, llama.cpp).

Per pack size: time to first token recomputing the prefix vs restoring its snapshot (read,
sha256 check, set state), save and load ms, bytes per 1k tokens, and a quality certificate of
restored vs recomputed (greedy identity over probe prompts). Then item-aware pruning vs blind
tail keeping and the q8_0 KV type, each against its own recompute, and the chat endpoint's
per-turn latency with and without snapshots (see ``benchmarks.kv_chat``), and a multi-day chat
with a dream between days (``benchmarks.kv_days``, also runnable alone as ``kv-days``).

Aims (recorded, not asserted): ≥ 20× faster first token at 2,000 tokens, identical greedy output in
100 % of probes, restore ≤ 150 ms at 2,000 tokens.
"""

from __future__ import annotations

import os
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

from benchmarks.kv_data import pack_text
from benchmarks.results import Section

TITLE = "KV snapshots of packs on a local model: first token, save/load, size, fidelity"
SIZES = {"tiny": ([200], 1, 2), "small": ([500, 1000], 2, 3), "full": ([500, 1000, 2000, 4000], 4, 5)}
QUESTION = [{"role": "user", "content": "What do you remember about my plans?"}]


def _threads() -> int:
    return int(os.environ.get("ELEPHANTASM_LOCAL_N_THREADS", "1"))


def _engine(n_ctx: int, kv_type: str = "f16"):  # type: ignore[no-untyped-def]
    from elephantasm.local.engine import LocalEngine
    from elephantasm.local.model import resolve_model_path

    return LocalEngine(resolve_model_path(None), n_ctx=n_ctx, n_threads=_threads(), kv_type=kv_type)


def _first_token(engine, suffix: list[int]) -> int:  # type: ignore[no-untyped-def]
    engine.extend(suffix)
    return int(np.argmax(engine.logits()))


def _one_size(engine, store, target: int, probes: int) -> tuple[list[str], dict]:  # type: ignore[no-untyped-def]
    from elephantasm.domain.kv.snapshot import decode_snapshot, encode_snapshot
    from elephantasm.services.kv.packages import certify
    from elephantasm.services.kv.snapshots import header, make_prefix

    system, items = pack_text(target, lambda t: len(engine.tokenize_suffix(t)))
    prefix_text, suffix_text = engine.split_prompt(system, QUESTION)
    prefix, suffix = make_prefix(engine, prefix_text), engine.tokenize_suffix(suffix_text)
    org = uuid.uuid4()
    t0 = time.perf_counter()
    engine.prefill(prefix.tokens)
    prefill = time.perf_counter() - t0
    t0 = time.perf_counter()
    blob = encode_snapshot(header(engine, prefix, "bench"), engine.save_state())
    digest = store.write(org, blob)
    save = time.perf_counter() - t0
    t0 = time.perf_counter()
    first_recomputed = _first_token(engine, suffix)
    ttft_recompute = prefill + time.perf_counter() - t0
    t0 = time.perf_counter()
    _, state = decode_snapshot(store.read(org, digest) or b"", digest_verified=True)  # as the server restores
    engine.restore_state(state, prefix.tokens)
    load = time.perf_counter() - t0
    first_restored = _first_token(engine, suffix)
    ttft_restore = time.perf_counter() - t0
    cert = certify(engine, prefix, state, probes)
    row = [
        f"{len(prefix.tokens):,}",
        f"{ttft_recompute * 1000:,.0f}",
        f"{ttft_restore * 1000:,.0f}",
        f"{ttft_recompute / ttft_restore:,.1f}x",
        f"{save * 1000:,.0f}",
        f"{load * 1000:,.0f}",
        f"{len(blob) / len(prefix.tokens) * 1000 / 2**20:,.1f}",
        f"{cert['identical_rate'] * 100:.0f}%",
        cert["grade"],
    ]
    assert first_recomputed == first_restored or cert["grade"] != "A"
    return row, {"prefix": prefix, "items": items, "state": state, "blob": len(blob)}


def _pruning_rows(engine, probe: dict, probes: int) -> list[list[str]]:  # type: ignore[no-untyped-def]
    from benchmarks.kv_pruning import keep_tail, prune_items

    prefix = probe["prefix"]
    t0 = time.perf_counter()
    items = prune_items(engine, prefix, probe["items"], 0.25, probes)
    took = time.perf_counter() - t0
    tail = keep_tail(engine, prefix, items["tokens_after"], probes)
    rows = []
    for name, result in (
        ("item-aware: drop lowest-scored 25 % of items", items),
        ("blind: keep the last N tokens (same N)", tail),
    ):
        c = result["certificate"]
        rows.append(
            [
                name,
                f"{result['tokens_before']:,} → {result['tokens_after']:,}",
                f"{c['identical_rate'] * 100:.0f}%",
                f"{c['top1_agreement']:.3f}",
                f"{c['mean_kl']:.4f}",
                c["grade"],
                "",
            ]
        )
    rows[0][-1] = f"{took * 1000:,.0f} ms incl. certificate"
    return rows


def _q8_row(f16, probe: dict, probes: int, n_ctx: int) -> list[str]:  # type: ignore[no-untyped-def]
    from elephantasm.services.kv.quality import measure

    q8 = _engine(n_ctx, "q8_0")
    prefix = probe["prefix"]
    t0 = time.perf_counter()
    q8.prefill(prefix.tokens)
    prefill = time.perf_counter() - t0
    state = q8.save_state()
    t0 = time.perf_counter()
    q8.restore_state(state, prefix.tokens)
    restore = time.perf_counter() - t0

    def recompute() -> int:
        f16.prefill(prefix.tokens)
        return len(prefix.tokens)

    def q8_prefill() -> int:
        q8.prefill(prefix.tokens)
        return len(prefix.tokens)

    c = measure((f16, recompute), (q8, q8_prefill), "f16 recompute", n_probes=probes)
    return [
        "q8_0 KV (flash attention) vs f16",
        f"{len(state) / probe['blob'] * 100:.0f}% of f16 bytes",
        f"{c['identical_rate'] * 100:.0f}%",
        f"{c['top1_agreement']:.3f}",
        f"{c['mean_kl']:.4f}",
        c["grade"],
        f"prefill {prefill * 1000:,.0f} ms, restore {restore * 1000:,.0f} ms",
    ]


def run(size: str) -> list[Section]:
    """Measure at the pack sizes of ``size`` (tiny/small/full)."""
    from elephantasm.local.store import SnapshotStore

    targets, probes, turns = SIZES[size]
    n_ctx = max(targets) + 512
    engine = _engine(n_ctx)
    rows, measured = [], []
    with tempfile.TemporaryDirectory(prefix="elephantasm-kv-") as work:
        store = SnapshotStore(Path(work))
        for target in targets:
            row, probe = _one_size(engine, store, target, probes)
            rows.append(row)
            measured.append(probe)
            print(f"   {row[0]} tokens: recompute {row[1]} ms, restore {row[2]} ms", flush=True)
    probe = measured[min(1, len(measured) - 1)]
    quality_rows = _pruning_rows(engine, probe, probes) + [_q8_row(engine, probe, probes, n_ctx)]
    env = {
        "model": engine.path.name,
        "llama.cpp threads": str(_threads()),
        "llama-cpp-python": engine.llama_cpp_version,
    }
    note = (
        f"Load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores when the run ended: absolute times "
        "depend on what else runs; ratios are the meaningful part."
    )
    engine_section = Section(
        "kv",
        TITLE,
        [
            "prefix tokens",
            "first token recomputed ms",
            "first token restored ms",
            "speed-up",
            "save ms",
            "load ms",
            "MiB per 1k tokens",
            "identical greedy",
            "grade",
        ],
        rows,
        [
            note,
            f"{probes} probe prompts × 16 greedy tokens per size; load = read + one sha256 pass + set state; "
            "restored first token includes load and the question's own prefill; save includes fsync.",
            "Aims: ≥ 20× faster first token at 2,000 tokens, 100 % identical greedy output, restore ≤ 150 ms "
            "at 2,000 tokens (the tiny/small sizes stop at 1,000 tokens).",
        ],
        env,
    )
    quality = Section(
        "kv-pruning",
        f"Pruning and q8_0 KV at {len(probe['prefix'].tokens):,} prefix tokens, each vs its own recompute",
        ["variant", "size", "identical greedy", "top-1 agreement", "mean KL (nats)", "grade", "time"],
        quality_rows,
        [
            note,
            "Retention = the pruned/quantised cache vs recomputing the text it stands for (pruning) or the f16 "
            "cache (q8_0), teacher-forced over the probes.",
        ],
        env,
    )
    from benchmarks.kv_chat import chat_section
    from benchmarks.kv_days import days_section

    return [engine_section, quality, chat_section(turns, note), days_section(size, note)]
