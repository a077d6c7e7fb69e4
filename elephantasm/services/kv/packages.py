"""Memory packages: export a KV snapshot with its manifest and a measured quality certificate,
import one (verified, same model only), and re-verify a stored snapshot.

Same-model transfer only: a KV cache is a function of the exact weights, tokenizer and template,
so a package for another model file is refused; there is no honest cross-model method.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from elephantasm.db.models import KVSnapshotRow
from elephantasm.domain.errors import ConflictError, ValidationError
from elephantasm.domain.fingerprint import sha256_hex
from elephantasm.domain.kv.package import PackageError, open_package, seal_package
from elephantasm.domain.kv.snapshot import SnapshotFormatError, decode_snapshot, token_ids_hash
from elephantasm.services.animas import get_anima
from elephantasm.services.kv import rows
from elephantasm.services.kv.quality import measure
from elephantasm.services.kv.snapshots import Prefix, make_prefix, row_values

if TYPE_CHECKING:
    from elephantasm.db.engine import SessionFactory
    from elephantasm.local.engine import LocalEngine
    from elephantasm.local.holder import LocalModels


def _same_model(engine: LocalEngine, digest: str, what: str) -> None:
    if digest != engine.model_digest:
        raise ValidationError(
            f"{what} was made with model {digest[:16]}…, this server runs {engine.model_digest[:16]}… "
            f"({engine.path.name}); KV state transfers between identical models only"
        )


def certify(engine: LocalEngine, prefix: Prefix, state: bytes, n_probes: int) -> dict[str, Any]:
    """Restored vs recomputed over ``n_probes`` probes (blocking; takes the engine lock)."""

    def recompute() -> int:
        engine.prefill(prefix.tokens)
        return len(prefix.tokens)

    def restore() -> int:
        engine.restore_state(state, prefix.tokens)
        return len(prefix.tokens)

    with engine.lock:
        return measure((engine, recompute), (engine, restore), "recompute", n_probes=n_probes)


def manifest_for(engine: LocalEngine, row: KVSnapshotRow, now: datetime) -> dict[str, Any]:
    """The package manifest: source model, context metadata and reconstruction hints."""
    return {
        **engine.describe(),
        "chat_template": engine.template,
        "template_sha256": sha256_hex(engine.template),
        "snapshot_key": row.snapshot_key,
        "pack_fingerprint": row.pack_fingerprint,
        "n_tokens": row.n_tokens,
        "token_ids_hash": row.token_ids_hash,
        "kv_type": row.kv_type,
        "n_ctx": row.n_ctx,
        "layer_counts": row.meta.get("layer_counts", {}),
        "summary": row.meta.get("summary"),
        "source_snapshot_id": str(row.id),
        "created_at": row.created_at.isoformat(),
        "exported_at": now.isoformat(),
    }


async def _certified(
    read_session: SessionFactory, models: LocalModels, org_id: uuid.UUID, snapshot_id: uuid.UUID, n_probes: int
) -> tuple[KVSnapshotRow, bytes, LocalEngine, dict[str, Any]]:
    """A stored snapshot (row, file, engine) and its certificate measured now."""
    async with read_session() as session:
        row = await rows.get(session, org_id, snapshot_id)
    blob = await asyncio.to_thread(models.store.read, org_id, row.sha256)
    if blob is None:
        raise ConflictError(
            f"kv snapshot {snapshot_id}: its file is missing or failed its checksum (deleted); "
            "it is rebuilt on the next use of its pack"
        )
    engine = await models.aengine()
    _same_model(engine, row.model_digest, f"kv snapshot {snapshot_id}")
    header, state = decode_snapshot(blob)
    cert = await asyncio.to_thread(certify, engine, make_prefix(engine, header["prefix_text"]), state, n_probes)
    return row, blob, engine, cert


async def export_package(
    read_session: SessionFactory,
    models: LocalModels,
    secret: bytes,
    clock: Callable[[], datetime],
    org_id: uuid.UUID,
    snapshot_id: uuid.UUID,
    n_probes: int = 4,
) -> bytes:
    """The package file for a stored snapshot, with a certificate measured now, signed with ``secret``;
    404 if the snapshot went meanwhile (a deletion takes the snapshots holding what it forgets)."""
    row, blob, engine, cert = await _certified(read_session, models, org_id, snapshot_id, n_probes)
    async with read_session() as session:
        await rows.get(session, org_id, snapshot_id)
    return seal_package(manifest_for(engine, row, clock()), cert, blob, secret)


async def verify_snapshot(
    read_session: SessionFactory, models: LocalModels, org_id: uuid.UUID, snapshot_id: uuid.UUID, n_probes: int = 4
) -> dict[str, Any]:
    """Re-measure a stored snapshot's certificate (restored vs recomputed)."""
    return (await _certified(read_session, models, org_id, snapshot_id, n_probes))[3]


def _checked(engine: LocalEngine, manifest: dict[str, Any], snapshot: bytes) -> tuple[dict[str, Any], Prefix]:
    """Everything an import must agree on before the state may ever reach the model."""
    _same_model(engine, str(manifest.get("model_digest")), "the package")
    if manifest.get("kv_type") != engine.kv_type:
        raise ValidationError(
            f"the package holds a {manifest.get('kv_type')} KV cache; this server uses "
            f"{engine.kv_type} (ELEPHANTASM_LOCAL_KV_TYPE)"
        )
    try:
        header, state = decode_snapshot(snapshot)
    except SnapshotFormatError as exc:
        raise ValidationError(f"package rejected: {exc}") from None
    prefix = make_prefix(engine, header.get("prefix_text", ""))
    if prefix.key != manifest.get("snapshot_key") or prefix.tokens != header.get("tokens"):
        raise ValidationError(
            "package rejected: its prefix does not tokenize to the stored tokens under this "
            "server's model and chat template"
        )
    if token_ids_hash(prefix.tokens) != manifest.get("token_ids_hash"):
        raise ValidationError("package rejected: token hash mismatch")
    with engine.lock:
        engine.restore_state(state, prefix.tokens)  # KVStateError (422) if llama.cpp refuses it
    return header, prefix


async def import_package(
    unit_of_work: SessionFactory,
    models: LocalModels,
    secret: bytes,
    org_id: uuid.UUID,
    anima_id: uuid.UUID,
    blob: bytes,
) -> tuple[KVSnapshotRow, dict, dict]:
    """Verify a package (signature with ``secret``, checksums, model, tokens, loadability) and store
    its snapshot: the anima is checked and the row written in two units of work around the model's checks."""
    try:
        manifest, cert, snapshot = open_package(blob, secret)
    except PackageError as exc:
        raise ValidationError(f"package rejected: {exc}") from None
    async with unit_of_work() as session:
        await get_anima(session, org_id, anima_id)  # 404 for another org's anima
    engine = await models.aengine()
    _, prefix = await asyncio.to_thread(_checked, engine, manifest, snapshot)
    digest = await asyncio.to_thread(models.store.write, org_id, snapshot)
    meta = {
        "layer_counts": manifest.get("layer_counts", {}),
        "summary": manifest.get("summary"),
        "certificate": cert,
        "source_snapshot_id": manifest.get("source_snapshot_id"),
    }
    stored = (digest, len(snapshot))
    values = row_values(engine, org_id, anima_id, prefix, manifest["pack_fingerprint"], stored, "imported", meta)
    async with unit_of_work() as session:
        row = await rows.upsert(session, values)
        await rows.evict(session, models.store, models.budget_bytes)
    return row, manifest, cert
