"""KV snapshots, memory packages and recorded generations of the local model."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, Request, Response, delete, get, post
from litestar.params import FromPath, FromQuery, QueryParameter
from litestar.status_codes import HTTP_200_OK, HTTP_201_CREATED, HTTP_204_NO_CONTENT

from api.deps import CallerDep, Limit, RuntimeDep, parse_uuid
from elephantasm.db.models import KVSnapshotRow
from elephantasm.domain.errors import ValidationError
from elephantasm.schemas.local import GenerationRead, KVPackageImported, KVSnapshotRead, ReplayRead
from elephantasm.services.kv import generations, packages, rows

MAX_PACKAGE_BYTES = 1024**3
PACKAGE_MEDIA_TYPE = "application/octet-stream"
Probes = Annotated[int, QueryParameter(ge=1, le=8, description="Probe prompts for the quality certificate.")]
AnimaFilter = Annotated[str | None, QueryParameter(description="Only this anima's snapshots.")]


def snapshot_read(row: KVSnapshotRow) -> KVSnapshotRead:
    """Wire shape of a snapshot row."""
    return KVSnapshotRead.model_validate({**row.model_dump(), "summary": (row.meta or {}).get("summary")})


class KVSnapshotController(Controller):
    """``/api/kv-snapshots`` and ``/api/kv-packages``."""

    path = "/api"
    tags = ["local model"]

    @get("/kv-snapshots")
    async def list_snapshots(
        self, caller: CallerDep, runtime: RuntimeDep, anima_id: AnimaFilter = None, limit: Limit = 100
    ) -> list[KVSnapshotRead]:
        """The org's snapshots, most recently used first."""
        anima = parse_uuid("anima_id", anima_id) if anima_id else None
        async with runtime.read_session() as session:
            return [snapshot_read(r) for r in await rows.list_for(session, caller.org_id, anima, limit)]

    @get("/kv-snapshots/{snapshot_id:str}")
    async def get_snapshot(self, snapshot_id: FromPath[str], caller: CallerDep, runtime: RuntimeDep) -> KVSnapshotRead:
        """One snapshot."""
        async with runtime.read_session() as session:
            return snapshot_read(await rows.get(session, caller.org_id, parse_uuid("snapshot_id", snapshot_id)))

    @delete("/kv-snapshots/{snapshot_id:str}", status_code=HTTP_204_NO_CONTENT)
    async def delete_snapshot(self, snapshot_id: FromPath[str], caller: CallerDep, runtime: RuntimeDep) -> None:
        """Delete a snapshot (its file too, unless another row of the org names the same bytes)."""
        sid = parse_uuid("snapshot_id", snapshot_id)
        async with runtime.unit_of_work() as session:
            row = await rows.get(session, caller.org_id, sid)
            await rows.delete_rows(session, runtime.local.store, rows.by_id(row.id))

    @get("/kv-snapshots/{snapshot_id:str}/package", media_type=PACKAGE_MEDIA_TYPE)
    async def export(
        self, snapshot_id: FromPath[str], caller: CallerDep, runtime: RuntimeDep, probes: Probes = 4
    ) -> Response[bytes]:
        """The snapshot as a signed memory package with a quality certificate measured now."""
        sid = parse_uuid("snapshot_id", snapshot_id)
        blob = await packages.export_package(
            runtime.read_session, runtime.local, runtime.secret, runtime.clock, caller.org_id, sid, probes
        )
        headers = {"Content-Disposition": f'attachment; filename="kv-{sid}.ekvpkg"'}
        return Response(blob, media_type=PACKAGE_MEDIA_TYPE, headers=headers)

    @post("/kv-snapshots/{snapshot_id:str}/verify", status_code=HTTP_200_OK)
    async def verify(
        self, snapshot_id: FromPath[str], caller: CallerDep, runtime: RuntimeDep, probes: Probes = 4
    ) -> dict[str, Any]:
        """Re-measure the certificate of a stored snapshot (restored vs recomputed)."""
        sid = parse_uuid("snapshot_id", snapshot_id)
        return await packages.verify_snapshot(runtime.read_session, runtime.local, caller.org_id, sid, probes)

    @post("/kv-packages", status_code=HTTP_201_CREATED, request_max_body_size=MAX_PACKAGE_BYTES)
    async def import_package(
        self,
        request: Request,
        caller: CallerDep,
        runtime: RuntimeDep,
        anima_id: Annotated[str, QueryParameter(description="The anima that receives it.")],
    ) -> KVPackageImported:
        """Import a package (raw bytes): signature, checksums, same model, tokens and loadability checked."""
        blob = await request.body()
        if not blob:
            raise ValidationError("body: send the package file as the raw request body")
        aid = parse_uuid("anima_id", anima_id)
        row, manifest, cert = await packages.import_package(
            runtime.unit_of_work, runtime.local, runtime.secret, caller.org_id, aid, blob
        )
        return KVPackageImported(snapshot=snapshot_read(row), manifest=manifest, certificate=cert)


class GenerationController(Controller):
    """``/api/generations``: recorded local-model generations and their replay."""

    path = "/api/generations"
    tags = ["local model"]

    @get("/{generation_id:str}")
    async def get_generation(
        self, generation_id: FromPath[str], caller: CallerDep, runtime: RuntimeDep
    ) -> GenerationRead:
        """One generation with its seed, sampling settings, prompt hash and output."""
        gid = parse_uuid("generation_id", generation_id)
        async with runtime.read_session() as session:
            row = await generations.get_generation(session, caller.org_id, gid)
        return GenerationRead.model_validate(row.model_dump())

    @post("/{generation_id:str}/replay", status_code=HTTP_200_OK)
    async def replay(
        self, generation_id: FromPath[str], caller: CallerDep, runtime: RuntimeDep, reuse: FromQuery[bool] = True
    ) -> ReplayRead:
        """Re-run the generation from its record; ``identical`` says whether the output bytes match.
        ``?reuse=false``: from an empty KV cache (a full prefill), whatever the server's setting."""
        gid = parse_uuid("generation_id", generation_id)
        return await generations.replay(runtime.read_session, runtime.local, caller.org_id, gid, reuse)
