"""Inspector page: the pack composer (query + budget + preset → the pack, explained)."""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Response, get
from litestar.params import FromPath, QueryParameter

from api.deps import RuntimeDep
from api.ui.deps import UiUserDep, ui_id
from api.ui.render import page
from elephantasm.domain.pack_trace import PackTrace
from elephantasm.domain.presets import DEFAULT_PRESET, PRESET_NAMES
from elephantasm.schemas.packs import MAX_MAX_TOKENS, MAX_QUERY_CHARS, MIN_MAX_TOKENS
from elephantasm.services import animas as anima_svc
from elephantasm.services import packs as pack_svc
from elephantasm.services.inspector import AnimaCounts, anima_counts, compose

# ``query`` is a reserved handler argument in Litestar: bind it by alias (as the API does).
QueryText = Annotated[str | None, QueryParameter(name="query", max_length=MAX_QUERY_CHARS)]


def _holds_anything(counts: AnimaCounts) -> bool:
    return bool(counts.memories or counts.knowledge or counts.identity_version)


# Cut candidates listed by default (the best-ranked first); ``?cuts=all`` lists every one.
CUTS_SHOWN = 40


class PackPages(Controller):
    """``/ui/animas/{id}/pack``."""

    path = "/animas/{anima_id:str}/pack"

    @get("/")
    async def composer(
        self,
        anima_id: FromPath[str],
        ui: UiUserDep,
        runtime: RuntimeDep,
        query_text: QueryText = None,
        max_tokens: Annotated[int | None, QueryParameter(ge=MIN_MAX_TOKENS, le=MAX_MAX_TOKENS)] = None,
        preset: Annotated[str | None, QueryParameter(max_length=64)] = None,
        session_id: Annotated[str | None, QueryParameter(max_length=200)] = None,
        cuts: Annotated[str | None, QueryParameter(max_length=8, description="'all' lists every cut.")] = None,
    ) -> Response:
        """Compile the pack ``inject`` would serve for these inputs now, with every item's score,
        provenance and token cost, each layer's budget, and the candidates the budget cut and why."""
        aid = ui_id("anima", anima_id)
        deps = runtime.packs
        req = pack_svc.build_request(
            deps,
            ui.caller.org_id,
            aid,
            query=query_text or None,
            preset=preset or None,
            max_tokens=max_tokens,
            encoding=None,
            session_id=session_id or None,
        )
        async with runtime.read_session() as session:
            anima = await anima_svc.get_anima(session, ui.caller.org_id, aid)
            # What ``latest`` answers null for (the SDK's None): nothing recorded at all yet. Only an
            # anima without events can be in that state, so only then are its rows counted.
            nothing = anima.last_event_at is None and not _holds_anything(
                (await anima_counts(session, ui.caller.org_id, [aid])).get(aid, AnimaCounts())
            )
        trace = PackTrace()
        composition = compose(req, (await pack_svc.compile_pack(deps, req, trace=trace)).pack, trace)
        cut = composition.cut()
        return page(
            "pack.html",
            ui=ui,
            anima=anima,
            comp=composition,
            pack=composition.pack,
            cut=cut,
            filtered=composition.filtered(),
            cut_shown=cut if cuts == "all" else cut[:CUTS_SHOWN],
            cut_limit=None if cuts == "all" else CUTS_SHOWN,
            query=query_text or "",
            max_tokens=req.max_tokens,
            preset=req.config.preset_name,
            session_id=session_id or "",
            presets=PRESET_NAMES,
            default_preset=DEFAULT_PRESET,
            min_tokens=MIN_MAX_TOKENS,
            max_max_tokens=MAX_MAX_TOKENS,
            nothing_recorded=nothing,
            tab="pack",
        )
