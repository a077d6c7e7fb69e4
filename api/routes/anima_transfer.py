"""``/api/animas/{id}/export`` and ``/api/animas/import``: move one anima between orgs or servers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated

from litestar import Controller, Request, get, post
from litestar.params import FromPath, QueryParameter
from litestar.response import Stream
from litestar.status_codes import HTTP_201_CREATED

from api.deps import CallerDep, RuntimeDep, parse_uuid
from elephantasm.domain.errors import ValidationError
from elephantasm.schemas.animas import AnimaRead
from elephantasm.services.anima_export import export_lines
from elephantasm.services.anima_import import embed_parsed, parse_export, write_import
from elephantasm.services.animas import get_anima
from elephantasm.services.spaces import current_space

NDJSON = "application/x-ndjson"


class AnimaTransferController(Controller):
    """Export an anima as JSON lines; import such a file as a new anima of the caller's org."""

    path = "/api/animas"
    tags = ["animas"]

    @get("/{anima_id:str}/export", media_type=NDJSON)
    async def export(self, anima_id: FromPath[str], caller: CallerDep, runtime: RuntimeDep) -> Stream:
        """Events, memories + provenance, knowledge + history and identity history, one JSON per line."""
        aid = parse_uuid("anima_id", anima_id)
        async with runtime.read_session() as session:
            await get_anima(session, caller.org_id, aid)  # a 404 before the stream starts

        async def lines() -> AsyncIterator[bytes]:
            async with runtime.background.read_session() as session:  # long by nature
                async for line in export_lines(session, caller.org_id, aid):
                    yield line.encode()

        return Stream(
            lines(), media_type=NDJSON, headers={"Content-Disposition": f'attachment; filename="anima-{aid}.jsonl"'}
        )

    @post("/import", status_code=HTTP_201_CREATED)
    async def import_(
        self,
        request: Request,
        caller: CallerDep,
        runtime: RuntimeDep,
        name: Annotated[
            str | None,
            QueryParameter(
                min_length=1, max_length=200, description="Name of the new anima (default: the exported one's)."
            ),
        ] = None,
        partial: Annotated[
            bool,
            QueryParameter(
                description="Import a file whose trailer line is missing or does not match (a cut or edited export)."
            ),
        ] = False,
    ) -> AnimaRead:
        """Create a new anima from an export (body: its JSON lines); 422 naming the first bad line, or
        the trailer when the file is cut short or altered (unless ``partial=true``)."""
        try:
            text = (await request.body()).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValidationError(f"body: not UTF-8 ({exc.reason} at byte {exc.start})") from None
        parsed = parse_export(text.splitlines(), runtime.settings, runtime.clock(), partial=partial)
        vectors = await embed_parsed(runtime.embedder, parsed)
        space = await current_space(runtime)
        async with runtime.background.unit_of_work() as session:
            anima_id = await write_import(session, caller.org_id, parsed, vectors, name, space)
        async with runtime.read_session() as session:
            return AnimaRead.model_validate(await get_anima(session, caller.org_id, anima_id))
