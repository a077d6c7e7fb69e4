"""KV snapshots of pack prefixes: restore one (verified) or prefill and keep a new one.

The blocking parts (:func:`prime`) run in a worker thread with the engine's lock held by the
caller; the async parts read and write rows and files around them, never holding a transaction
across model work.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from elephantasm.db.models import KVSnapshotRow
from elephantasm.domain.fingerprint import sha256_hex
from elephantasm.domain.kv.snapshot import (
    SnapshotFormatError,
    decode_snapshot,
    encode_snapshot,
    snapshot_key,
    token_ids_hash,
)
from elephantasm.local.errors import KVStateError
from elephantasm.services.kv import rows
from elephantasm.services.kv.prefix import PackPrompt

if TYPE_CHECKING:
    from elephantasm.local.engine import LocalEngine
    from elephantasm.runtime import Runtime


@dataclass(frozen=True)
class Prefix:
    """A tokenized prompt prefix and its snapshot key."""

    key: str
    text: str
    tokens: list[int]
    lines: list[str]
    starts: list[int]


@dataclass(frozen=True)
class Primed:
    """Outcome of :func:`prime`: ``hit`` (restored), ``miss`` (prefilled, ``blob`` to keep) or
    ``off`` (snapshots disabled); ``discarded`` when a stored snapshot failed and was recomputed."""

    status: str
    blob: bytes | None = None
    discarded: bool = False


def make_prefix(engine: LocalEngine, prefix_text: str) -> Prefix:
    """Tokenize ``prefix_text`` (line by line) and key it for this engine."""
    tokens, lines, starts = engine.tokenize_prefix(prefix_text)
    key = snapshot_key(engine.model_digest, engine.template, prefix_text, engine.kv_type)
    return Prefix(key, prefix_text, tokens, lines, starts)


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


def state_of(blob: bytes | None, prefix: Prefix) -> bytes | None:
    """The KV state in a file verified by the store (``SnapshotStore.read``) if it is the one for
    ``prefix`` (same key, same tokens)."""
    if blob is None:
        return None
    try:
        meta, state = decode_snapshot(blob, digest_verified=True)  # read from the store: already verified
    except SnapshotFormatError:
        return None
    if meta.get("snapshot_key") != prefix.key or meta.get("tokens") != prefix.tokens:
        return None
    return state


def prime(engine: LocalEngine, prefix: Prefix, state: bytes | None, fingerprint: str, keep: bool) -> Primed:
    """Put the prefix in the engine's cache: restore ``state``, else prefill (caller holds the lock)."""
    discarded = False
    if state is not None:
        try:
            engine.restore_state(state, prefix.tokens)
            return Primed("hit")
        except KVStateError:
            discarded = True  # never guess: recompute from the text
    engine.prefill(prefix.tokens)
    if not keep:
        return Primed("off", None, discarded)
    return Primed("miss", encode_snapshot(header(engine, prefix, fingerprint), engine.save_state()), discarded)


async def lookup(
    runtime: Runtime, org_id: uuid.UUID, anima_id: uuid.UUID, prefix: Prefix
) -> tuple[KVSnapshotRow | None, bytes | None]:
    """The snapshot row for the prefix and its verified state (None if missing, corrupt or another's)."""
    async with runtime.read_session() as session:
        row = await rows.find(session, org_id, anima_id, prefix.key)
    if row is None:
        return None, None
    store = runtime.local.store(runtime.settings)
    blob = await asyncio.to_thread(store.read, org_id, row.sha256)
    return row, state_of(blob, prefix)


async def settle(
    runtime: Runtime,
    org_id: uuid.UUID,
    anima_id: uuid.UUID,
    engine: LocalEngine,
    prefix: Prefix,
    pack: PackPrompt,
    primed: Primed,
    row: KVSnapshotRow | None,
) -> KVSnapshotRow | None:
    """After priming: keep a new snapshot (file, row, LRU budget) or mark a hit as used."""
    settings, store = runtime.settings, runtime.local.store(runtime.settings)
    if primed.status == "hit" and row is not None:
        async with runtime.unit_of_work() as session:
            await rows.touch(session, row.id, runtime.clock())
        return row
    if primed.blob is None:
        return None
    digest = await asyncio.to_thread(store.write, org_id, primed.blob)
    values = {
        "id": uuid.uuid4(),
        "org_id": org_id,
        "anima_id": anima_id,
        "snapshot_key": prefix.key,
        "pack_fingerprint": pack.fingerprint,
        "model_digest": engine.model_digest,
        "model_name": engine.model_name,
        "llama_cpp_version": engine.llama_cpp_version,
        "kv_type": engine.kv_type,
        "n_ctx": engine.n_ctx,
        "n_tokens": len(prefix.tokens),
        "token_ids_hash": token_ids_hash(prefix.tokens),
        "bytes": len(primed.blob),
        "sha256": digest,
        "source": "built",
        "meta": {"layer_counts": pack.layer_counts, "summary": pack.summary(), "items": pack.items},
    }
    async with runtime.unit_of_work() as session:
        saved = await rows.upsert(session, values)
        if row is not None and row.sha256 != digest:  # the old file failed its checks: drop it
            await rows.unlink_orphans(session, store, [(org_id, row.sha256)])
        await rows.evict(session, store, settings.local_kv_budget_bytes)
    return saved


async def build(
    runtime: Runtime, org_id: uuid.UUID, anima_id: uuid.UUID, pack: PackPrompt
) -> tuple[str, KVSnapshotRow | None]:
    """Ensure the snapshot of ``pack``'s prefix exists (the ``kv build`` use case); (status, row)."""
    engine = await runtime.local.aengine(runtime.settings)
    prefix_text, _ = engine.split_prompt(pack.system, [])
    prefix = make_prefix(engine, prefix_text)
    row, state = await lookup(runtime, org_id, anima_id, prefix)

    def work() -> Primed:
        with engine.lock:
            return prime(engine, prefix, state, pack.fingerprint, keep=True)

    primed = await asyncio.to_thread(work)
    return primed.status, await settle(runtime, org_id, anima_id, engine, prefix, pack, primed, row)
