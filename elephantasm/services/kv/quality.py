"""Measuring a quality certificate: a candidate KV state (restored, pruned, another KV type)
against a reference (recomputing the prefix from text) over a set of probe prompts.

Each path prefills (or restores) its prefix once; between probes the cache is cut back to the
prefix, so the prefix cells stay the ones that path produced. The candidate is fed the
reference's greedy tokens (teacher forcing) so every step compares like with like.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from elephantasm.domain.kv.quality import ProbeResult, certificate
from elephantasm.local.sampling import kl_divergence

if TYPE_CHECKING:
    from elephantasm.local.engine import LocalEngine

PROBES = (
    "What do you remember about me?",
    "Summarise what you know about me in one sentence.",
    "What should I do this weekend?",
    "Name one thing I like.",
    "Where could we meet next time?",
    "What is my favourite food?",
    "Who are the people in my life?",
    "What hobbies do I have?",
)


def _trace(
    engine: LocalEngine, suffix: list[int], forced: Sequence[int] | None, n: int
) -> tuple[list[int], list[np.ndarray]]:
    engine.extend(suffix)
    tokens: list[int] = []
    logits: list[np.ndarray] = []
    for i in range(n):
        step = engine.logits()
        token = int(np.argmax(step))
        tokens.append(token)
        logits.append(step)
        done = engine.is_end(token) if forced is None else i + 1 >= len(forced)  # forced: as long as the reference
        if done:
            break
        engine.extend([forced[i] if forced is not None else token])
    return tokens, logits


def _run(
    engine: LocalEngine, setup: Callable[[], int], suffixes: list[list[int]], forced: list[list[int]] | None, n: int
) -> list[tuple[list[int], list[np.ndarray]]]:
    base = setup()
    out = []
    for i, suffix in enumerate(suffixes):
        if i:
            engine.truncate(base)
        out.append(_trace(engine, suffix, forced[i] if forced else None, n))
    return out


def measure(
    reference: tuple[LocalEngine, Callable[[], int]],
    candidate: tuple[LocalEngine, Callable[[], int]],
    reference_name: str,
    n_probes: int = 4,
    n_tokens: int = 16,
) -> dict[str, Any]:
    """The certificate of ``candidate`` against ``reference``; each is (engine, setup) where setup
    puts the prefix in the engine's cache and returns its length (callers hold the engine locks)."""
    ref_engine, cand_engine = reference[0], candidate[0]
    probes = [[{"role": "user", "content": p}] for p in PROBES[:n_probes]]
    suffixes = [ref_engine.tokenize_suffix(ref_engine.split_prompt("", turns)[1]) for turns in probes]
    ref = _run(ref_engine, reference[1], suffixes, None, n_tokens)
    cand = _run(cand_engine, candidate[1], suffixes, [tokens for tokens, _ in ref], n_tokens)
    results = []
    for (rt, rl), (ct, cl) in zip(ref, cand, strict=True):
        results.append(
            ProbeResult(
                tuple(rt),
                tuple(ct),
                top1_matches=sum(a == b for a, b in zip(rt, ct, strict=False)),
                steps=len(rt),
                kl=tuple(kl_divergence(r, c) for r, c in zip(rl, cl, strict=False)),
            )
        )
    cert = certificate(results, reference_name)
    cert["probe_tokens"] = n_tokens
    return cert
