"""Putting a prompt's KV in the engine's cache with the least work, and proving the work was spared.

Sources, best first by how many leading prompt tokens they hold: the engine's live cache (the
conversation that ran last, if it is the same owner's), a state kept in memory (a conversation
another one displaced), a snapshot on disk (found by the caller through its prefix index). The
best one is restored and cut back to the common prefix; only the rest of the prompt is evaluated.

Every restore is checked by llama.cpp's own count of evaluated tokens: it must equal the prompt
minus what the source was chosen to provide. A restore that did not spare that work (a state that
was not what it claimed, or a model whose cache keeps no usable prefix, such as a sliding-window
or recurrent one) is reported as ``recomputed``, logged once, and the model is marked so that no
restore is tried on it again in this process.

Blocking: callers hold the engine's lock and run this off the event loop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from elephantasm.domain.kv.prefix_index import BLOCK, common_prefix
from elephantasm.domain.kv.snapshot import encode_snapshot
from elephantasm.local.engine import MIN_BATCH
from elephantasm.local.errors import KVStateError
from elephantasm.local.states import HeldState
from elephantasm.observability import metrics

if TYPE_CHECKING:
    from elephantasm.local.engine import LocalEngine

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Prompt:
    """A prompt's token ids; the first ``n_prefix`` are the pack-holding system turn."""

    tokens: list[int]
    n_prefix: int

    def reusable(self, n: int, need_logits: bool = True) -> int:
        """How much of a shared prefix of ``n`` tokens is worth reusing: at least a block, leaving
        nothing or a full batch to evaluate (a batch at least when the next logits are needed)."""
        total = len(self.tokens)
        n = min(n, total - MIN_BATCH if need_logits else total)
        if 0 < total - n < MIN_BATCH:  # a shorter rest would be evaluated with other numerics
            n = total - MIN_BATCH
        return n if n >= BLOCK else 0


@dataclass
class Source:
    """A KV state that may hold the start of the prompt.

    ``tokens`` are the tokens the state itself was made for (a snapshot's header, a kept state's
    record); ``claim`` is how many prompt tokens it was chosen to provide."""

    kind: str  # live | memory | snapshot
    tokens: list[int]
    claim: int
    state: bytes | None = None
    entry: HeldState | None = None
    ref: Any = None


@dataclass(frozen=True)
class Primed:
    """What priming did: ``status`` (``hit``, ``prefix``, ``miss``, ``off`` or ``recomputed``), prompt
    tokens ``restored`` from KV and ``prefilled`` (llama.cpp's count), the source used, the system
    turn's state captured to keep as a new snapshot (``kept``: header and raw state), and
    ``discarded`` when a state was refused by llama.cpp and recomputed."""

    status: str
    restored: int = 0
    prefilled: int = 0
    source: Source | None = None
    kept: tuple[dict[str, Any], bytes] | None = None
    discarded: bool = False

    @property
    def blob(self) -> bytes | None:
        """The new snapshot file, encoded when asked (checksumming ~45 MiB waits until after the reply)."""
        return encode_snapshot(*self.kept) if self.kept is not None else None


def in_memory(engine: LocalEngine, owner: object, prompt: Prompt, need_logits: bool = True) -> Source | None:
    """The best of the live cache and the kept states of ``owner`` (no lock needed: a peek)."""
    best: Source | None = None
    if engine.owner is not None and engine.owner == owner:
        held = engine.held()
        best = Source("live", held, prompt.reusable(common_prefix(held, prompt.tokens), need_logits))
    entry, n = engine.states.best(owner, prompt.tokens)
    if entry is not None and (best is None or prompt.reusable(n, need_logits) > best.claim):
        best = Source("memory", entry.tokens, prompt.reusable(n, need_logits), entry.state, entry)
    return best if best is not None and best.claim > 0 else None


def _stash_live(engine: LocalEngine, keep: int) -> None:
    """Save the live cache in memory before it is cut back to ``keep`` tokens or replaced, when
    that would lose at least a block of some conversation's prompt."""
    if engine.owner is None or not engine.reuse_ok or engine.n_exact - keep < BLOCK:
        return
    held = engine.held()
    engine.truncate(len(held))  # generated tokens are never reused
    engine.states.put(HeldState(engine.owner, held, engine.save_state()))


def _restore(engine: LocalEngine, source: Source | None) -> tuple[Source | None, bool]:
    """Load ``source`` into the cache; (None, True) if llama.cpp refused it."""
    if source is None or source.kind == "live":
        return source, False
    if source.entry is not None:
        engine.states.take(source.entry)
    try:
        engine.restore_state(source.state or b"", source.tokens)
    except KVStateError:
        return None, True
    return source, False


def prime(
    engine: LocalEngine,
    owner: object,
    prompt: Prompt,
    snapshot: Source | None,
    keep: Callable[[], dict[str, Any]] | None,
    reuse: bool = True,
    need_logits: bool = True,
    min_new: int = BLOCK,
) -> Primed:
    """Put ``prompt`` in the engine's cache (caller holds the lock); the best source is restored.

    ``keep``, if given, makes the header of a new snapshot of the system turn, kept when at least
    ``min_new`` of its tokens had to be computed. ``reuse=False``: no source at all (reuse off)."""
    usable = reuse and engine.reuse_ok
    source = in_memory(engine, owner, prompt, need_logits) if usable else None
    if usable and snapshot is not None and (source is None or snapshot.claim > source.claim):
        source = snapshot
    if usable:
        _stash_live(engine, source.claim if source is not None and source.kind == "live" else 0)
    source, discarded = _restore(engine, source)
    before = engine.decoded()
    kept = engine.keep(min(source.claim, common_prefix(engine.held(), prompt.tokens))) if source else 0
    if source is None:
        engine.clear()
    captured = _evaluate(engine, prompt, kept, keep if kept + min_new <= prompt.n_prefix else None)
    prefilled = engine.decoded() - before
    engine.owner = owner
    if source is not None:
        return _checked(engine, prompt, source, kept, prefilled, captured)
    status = "miss" if usable else "off"
    return Primed(status, 0, prefilled, None, captured, discarded)


def _evaluate(
    engine: LocalEngine, prompt: Prompt, start: int, keep: Callable[[], dict[str, Any]] | None
) -> tuple[dict[str, Any], bytes] | None:
    """Evaluate ``prompt.tokens[start:]``; stop after the system turn to capture its state if asked
    (and if both parts are long enough to be evaluated as batches). Capturing is one copy of the
    cache; encoding and writing it are left for after the reply."""
    tokens, cut = prompt.tokens, prompt.n_prefix
    if keep is not None and cut - start >= MIN_BATCH and (len(tokens) == cut or len(tokens) - cut >= MIN_BATCH):
        engine.extend(tokens[start:cut])
        captured = (keep(), engine.save_state())
        if len(tokens) > cut:
            engine.extend(tokens[cut:])
        return captured
    if len(tokens) > start:
        engine.extend(tokens[start:])
    return None


def _checked(
    engine: LocalEngine,
    prompt: Prompt,
    source: Source,
    kept: int,
    prefilled: int,
    captured: tuple[dict[str, Any], bytes] | None,
) -> Primed:
    """Compare llama.cpp's count with the work the source was chosen to spare."""
    expected = len(prompt.tokens) - source.claim
    model = engine.model_name
    if prefilled != expected:
        metrics.KV_RESTORE_CHECKS.labels(model, "recomputed").inc()
        if engine.reuse_ok:
            engine.reuse_ok = False
            metrics.KV_REUSE_DISABLED.labels(model).set(1)
            log.warning(
                "KV restore on %s did not reuse: the %s state should have spared %d of %d prompt tokens, "
                "llama.cpp evaluated %d; restores are off for this model until restart",
                model,
                source.kind,
                source.claim,
                len(prompt.tokens),
                prefilled,
            )
        return Primed("recomputed", kept, prefilled, source, captured)
    metrics.KV_RESTORE_CHECKS.labels(model, "reused").inc()
    status = "hit" if kept >= prompt.n_prefix else "prefix"
    return Primed(status, kept, prefilled, source, captured)
