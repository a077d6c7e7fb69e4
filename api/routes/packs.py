"""Memory packs: ``latest`` (what the SDK's inject() calls), explicit compile, served-pack history."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, MediaType, Response, get, post
from litestar.background_tasks import BackgroundTask
from litestar.params import FromPath, HeaderParameter, JSONBody, QueryParameter
from litestar.status_codes import HTTP_200_OK

from api.deps import CallerDep, Cursor, Limit, RuntimeDep, parse_uuid
from api.scopes import READ_ONLY
from elephantasm.domain.content_coding import accepts_gzip
from elephantasm.domain.presets import PRESET_NAMES
from elephantasm.schemas.common import Page
from elephantasm.schemas.packs import (
    MAX_MAX_TOKENS,
    MAX_QUERY_CHARS,
    MIN_MAX_TOKENS,
    MemoryPackRead,
    PackCompileRequest,
)
from elephantasm.services import packs as svc
from elephantasm.tokens import SUPPORTED_ENCODINGS

MaxTokens = Annotated[
    int | None,
    QueryParameter(ge=MIN_MAX_TOKENS, le=MAX_MAX_TOKENS, description="Hard cap on the prompt's tokens (default 4000)."),
]
# ``query`` is a reserved handler argument in Litestar (the raw query string): bind it by alias.
Query = Annotated[
    str | None, QueryParameter(name="query", max_length=MAX_QUERY_CHARS, description="What the agent is about to do.")
]
Preset = Annotated[
    str | None,
    QueryParameter(
        max_length=64, enum=PRESET_NAMES, description="conversational (default), self_determined, recent, important"
    ),
]
Encoding = Annotated[
    str | None,
    QueryParameter(max_length=64, enum=SUPPORTED_ENCODINGS, description="tiktoken encoding (default o200k_base)"),
]
SessionId = Annotated[str | None, QueryParameter(max_length=200, description="Treat this session as the current one.")]
IfNoneMatch = Annotated[str | None, HeaderParameter(name="If-None-Match", required=False)]
AcceptEncoding = Annotated[str | None, HeaderParameter(name="Accept-Encoding", required=False)]


def _respond(served: svc.Served) -> Response[bytes]:
    """Pre-serialised bytes straight out (a cache hit is never re-encoded); a fresh compile is
    recorded after the response is sent."""
    # The body depends on Accept-Encoding (gzip or not), so shared caches must key on it.
    headers = {"Vary": "Accept-Encoding"}
    if served.etag:
        headers["ETag"] = served.etag
    if served.content_encoding:
        headers["Content-Encoding"] = served.content_encoding
    background = BackgroundTask(served.followup) if served.followup else None
    return Response(
        served.body, status_code=served.status, media_type=MediaType.JSON, headers=headers, background=background
    )


class AnimaPackController(Controller):
    """Packs of one anima."""

    path = "/api/animas/{anima_id:str}/memory-packs"
    tags = ["memory packs"]

    @get("/latest")
    async def latest(
        self,
        anima_id: FromPath[str],
        caller: CallerDep,
        runtime: RuntimeDep,
        query_text: Query = None,
        preset: Preset = None,
        max_tokens: MaxTokens = None,
        encoding: Encoding = None,
        session_id: SessionId = None,
        if_none_match: IfNoneMatch = None,
        accept_encoding: AcceptEncoding = None,
    ) -> Response[MemoryPackRead | None]:
        """The pack to inject now; JSON null for an anima with nothing recorded; 304 if the ETag matches."""
        deps = runtime.packs
        req = svc.build_request(
            deps,
            caller.org_id,
            parse_uuid("anima_id", anima_id),
            query=query_text,
            preset=preset,
            max_tokens=max_tokens,
            encoding=encoding,
            session_id=session_id,
        )
        served = await svc.latest(deps, req, if_none_match, accept_gzip=accepts_gzip(accept_encoding))
        return _respond(served)  # type: ignore[return-value]

    @get("/")
    async def history(
        self, anima_id: FromPath[str], caller: CallerDep, runtime: RuntimeDep, limit: Limit = 20, cursor: Cursor = None
    ) -> Page[MemoryPackRead]:
        """Recently compiled packs of the anima, newest first (bounded retention)."""
        async with runtime.read_session() as session:
            items, next_cursor = await svc.list_packs(
                session, caller.org_id, parse_uuid("anima_id", anima_id), limit, cursor
            )
        return Page[MemoryPackRead](items=items, next_cursor=next_cursor)


class PackController(Controller):
    """Explicit compiles and single recorded packs."""

    path = "/api"
    tags = ["memory packs"]

    @post("/packs/compile", status_code=HTTP_200_OK, opt=READ_ONLY)
    async def compile(
        self,
        data: JSONBody[PackCompileRequest],
        caller: CallerDep,
        runtime: RuntimeDep,
        if_none_match: IfNoneMatch = None,
        accept_encoding: AcceptEncoding = None,
    ) -> Response[MemoryPackRead]:
        """Compile with an explicit configuration (a preset plus overrides); always returns a pack."""
        deps = runtime.packs
        req = svc.build_request(
            deps,
            caller.org_id,
            data.anima_id,
            query=data.query,
            preset=data.preset,
            overrides=data.config_overrides(),
            max_tokens=data.max_tokens,
            encoding=data.encoding,
            session_id=data.session_id,
            as_of=data.as_of,
        )
        served = await svc.compile_now(deps, req, if_none_match, accept_gzip=accepts_gzip(accept_encoding))
        return _respond(served)  # type: ignore[return-value]

    @get("/memory-packs/{pack_id:str}")
    async def get_pack(self, pack_id: FromPath[str], caller: CallerDep, runtime: RuntimeDep) -> MemoryPackRead:
        """One recorded pack."""
        async with runtime.read_session() as session:
            return await svc.get_pack(session, caller.org_id, parse_uuid("pack_id", pack_id))
