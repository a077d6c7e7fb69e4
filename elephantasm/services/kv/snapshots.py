"""KV snapshots of pack prefixes on disk: find the one sharing the longest token prefix with a
prompt, keep new ones, and the ``kv build`` use case.

Each row keeps the chained hashes of its prefix's 64-token blocks (``meta.blocks``): the org's
rows for a model form a prefix index (``domain.kv.prefix_index``) queried per prompt. Priming
itself (``reuse.prime``) runs in a worker thread with the engine's lock held; the async parts
read and write rows and files around it, in the caller's session, never across model work.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from elephantasm.db.models import KVSnapshotRow
from elephantasm.domain.fingerprint import sha256_hex
from elephantasm.domain.kv.prefix_index import BLOCK, PrefixIndex, block_hashes
from elephantasm.domain.kv.snapshot import SnapshotFormatError, decode_snapshot, snapshot_key, token_ids_hash
from elephantasm.observability import metrics
from elephantasm.services.forget import still_current
from elephantasm.services.kv import rows
from elephantasm.services.kv.prefix import PackPrompt
from elephantasm.services.kv.reuse import Primed, Prompt, Source, in_memory, prime

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from elephantasm.db.engine import SessionFactory
    from elephantasm.local.engine import LocalEngine
    from elephantasm.local.holder import LocalModels
    from elephantasm.local.store import SnapshotStore


@dataclass(frozen=True)
class Prefix:
    """A tokenized prompt prefix and its snapshot key."""

    key: str
    text: str
    tokens: list[int]


@dataclass(frozen=True)
class SnapshotOf:
    """What a new snapshot would hold: an anima's pack prefix."""

    org_id: uuid.UUID
    anima_id: uuid.UUID
    prefix: Prefix
    pack: PackPrompt


def make_prefix(engine: LocalEngine, prefix_text: str) -> Prefix:
    """Tokenize ``prefix_text`` (line by line) and key it for this engine."""
    key = snapshot_key(engine.model_digest, engine.template, prefix_text, engine.kv_type)
    return Prefix(key, prefix_text, engine.tokenize_prefix(prefix_text))


def header(engine: LocalEngine, prefix: Prefix, fingerprint: str) -> dict[str, Any]:
    """The snapshot file's metadata: enough to check it and to rebuild the prompt elsewhere."""
    return {
        "snapshot_key": prefix.key,
        "model_digest": engine.model_digest,
        "template_sha256": sha256_hex(engine.template),
        "kv_type": engine.kv_type,
        "n_ctx": engine.n_ctx,
        "llama_cpp_version": engine.llama_cpp_version,
        "pack_fingerprint": fingerprint,
        "prefix_text": prefix.text,
        "tokens": prefix.tokens,
    }


def _decoded(blob: bytes | None) -> tuple[dict[str, Any], bytes] | None:
    """A file read from the store (already verified) as ``(meta, state)``; None if absent or damaged."""
    if blob is None:
        return None
    try:
        return decode_snapshot(blob, digest_verified=True)
    except SnapshotFormatError:
        return None


def block_seed(engine: LocalEngine) -> str:
    """What a prefix's KV depends on besides its tokens: the seed of its block hashes."""
    return f"{engine.model_digest}:{sha256_hex(engine.template)}:{engine.kv_type}"


def _claims(rows_: list[Any], engine: LocalEngine, prompt: Prompt) -> tuple[Any, int]:
    """The row sharing the longest token prefix with the prompt and that length: a whole snapshot
    that is a prefix of the prompt (its token hash), else the deepest shared block (the index)."""
    best: tuple[Any, int] = (None, 0)
    hashes: dict[int, str] = {}
    for row in rows_:
        n = row.n_tokens
        if best[1] < n <= len(prompt.tokens):
            if n not in hashes:
                hashes[n] = token_ids_hash(prompt.tokens[:n])
            if hashes[n] == row.token_ids_hash:
                best = (row, n)
    index = PrefixIndex()
    for row in rows_:
        index.add(row.id, row.blocks or [])
    ref, depth = index.longest(block_hashes(prompt.tokens, block_seed(engine)))
    if depth * BLOCK > best[1]:
        best = (next(r for r in rows_ if r.id == ref), depth * BLOCK)
    return best


async def find(
    session: AsyncSession,
    store: SnapshotStore,
    org_id: uuid.UUID,
    engine: LocalEngine,
    prompt: Prompt,
    better_than: int = 0,
    need_logits: bool = True,
) -> Source | None:
    """The org's snapshot sharing the longest prefix with ``prompt`` (read and verified), if it
    provides more than ``better_than`` tokens; None otherwise or if its file is gone or damaged."""
    found = await rows.candidates(session, org_id, engine.model_digest, engine.kv_type)
    row, n = _claims(found, engine, prompt)
    claim = prompt.reusable(n, need_logits)
    if row is None or claim <= better_than:
        return None
    decoded = _decoded(await asyncio.to_thread(store.read, org_id, row.sha256))
    if decoded is None:
        return None
    meta, state = decoded
    return Source("snapshot", list(meta.get("tokens") or []), claim, state, ref=row)


async def find_for(
    read_session: SessionFactory, models: LocalModels, engine: LocalEngine, org_id: uuid.UUID, prompt: Prompt
) -> Source | None:
    """The org's snapshot worth restoring for ``prompt``: disk is read only if it offers more than
    the states held in memory (a peek at them, no lock needed)."""
    held = in_memory(engine, org_id, prompt)
    async with read_session() as session:
        return await find(session, models.store, org_id, engine, prompt, held.claim if held else 0)


def _write(store: SnapshotStore, org_id: uuid.UUID, primed: Primed) -> tuple[str, int] | None:
    """Encode and store the state priming captured: (digest, bytes), or None if it captured none."""
    blob = primed.blob
    return None if blob is None else (store.write(org_id, blob), len(blob))


async def settle(
    session: AsyncSession,
    models: LocalModels,
    now: datetime,
    engine: LocalEngine,
    of: SnapshotOf,
    primed: Primed,
    planned: Source | None,
) -> KVSnapshotRow | None:
    """After priming, in the caller's transaction (a chat turn: after the reply): count it, mark a
    used snapshot, keep the new one priming captured (file, row) and the store within its budget
    (LRU). If an item was forgotten since the pack was compiled, the pack may hold it: nothing new is
    kept, and the KV states the process holds for the org (computed from it, maybe) are dropped."""
    metrics.kv_primed(primed.status, primed.restored, primed.prefilled)
    # The anima row before any snapshot row, as a deletion locks them: no deadlock with one.
    current = await still_current(session, of.anima_id, of.pack.state_version)
    if not current:
        models.forget_org(of.org_id)
    used = primed.source.ref if primed.source is not None and primed.source.kind == "snapshot" else None
    if used is not None:
        await rows.touch(session, used.id, now)
    store = models.store
    written = await asyncio.to_thread(_write, store, of.org_id, primed) if current else None
    if written is None:
        return None
    pack = of.pack
    meta = {"layer_counts": pack.layer_counts, "summary": pack.summary(), "items": pack.items}
    saved = await rows.upsert(
        session, row_values(engine, of.org_id, of.anima_id, of.prefix, pack.fingerprint, written, "built", meta)
    )
    if primed.discarded and planned is not None and planned.ref.sha256 != written[0]:  # it failed: drop it
        await rows.unlink_orphans(session, store, [(of.org_id, planned.ref.sha256)])
    await rows.evict(session, store, models.budget_bytes)
    return saved


def row_values(
    engine: LocalEngine,
    org_id: uuid.UUID,
    anima_id: uuid.UUID,
    prefix: Prefix,
    fingerprint: str,
    stored: tuple[str, int],
    source: str,
    meta: dict[str, Any],
) -> dict[str, Any]:
    """A ``kv_snapshots`` row for a file ``stored`` (digest, bytes) of ``prefix``, indexed by its blocks."""
    return {
        "id": uuid.uuid4(),
        "org_id": org_id,
        "anima_id": anima_id,
        "snapshot_key": prefix.key,
        "pack_fingerprint": fingerprint,
        "model_digest": engine.model_digest,
        "model_name": engine.model_name,
        "llama_cpp_version": engine.llama_cpp_version,
        "kv_type": engine.kv_type,
        "n_ctx": engine.n_ctx,
        "n_tokens": len(prefix.tokens),
        "token_ids_hash": token_ids_hash(prefix.tokens),
        "bytes": stored[1],
        "sha256": stored[0],
        "source": source,
        "meta": meta | {"blocks": block_hashes(prefix.tokens, block_seed(engine))},
    }


async def build(
    unit_of_work: SessionFactory,
    models: LocalModels,
    clock: Callable[[], datetime],
    org_id: uuid.UUID,
    anima_id: uuid.UUID,
    pack: PackPrompt,
) -> tuple[str, KVSnapshotRow | None]:
    """Ensure the snapshot of ``pack``'s prefix is on disk (the ``kv build`` use case); (status, row).
    Reads and writes in two units of work, none held while the model runs."""
    engine = await models.aengine()
    prefix_text, _ = engine.split_prompt(pack.system, [])
    prefix = make_prefix(engine, prefix_text)
    prompt = Prompt(prefix.tokens, len(prefix.tokens))
    async with unit_of_work() as session:
        planned = await find(session, models.store, org_id, engine, prompt, need_logits=False)
    on_disk = planned is not None and planned.claim == len(prefix.tokens)

    def work() -> Primed:
        with engine.lock:
            keep = lambda: header(engine, prefix, pack.fingerprint)  # noqa: E731
            primed = prime(engine, org_id, prompt, planned, keep, need_logits=False)
            if primed.kept is None and not on_disk:  # served from memory: write it down all the same
                primed = replace(primed, kept=(header(engine, prefix, pack.fingerprint), engine.save_state()))
            return primed

    primed = await asyncio.to_thread(work)
    async with unit_of_work() as session:
        await settle(session, models, clock(), engine, SnapshotOf(org_id, anima_id, prefix, pack), primed, planned)
        return primed.status, await rows.find(session, org_id, anima_id, prefix.key)
