"""Inspector pages: the org's animas, one anima's overview, its event timeline, one event."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from typing import Annotated

from litestar import Controller, Response, get, post
from litestar.params import FromPath, QueryParameter

from api.deps import Cursor, RuntimeDep
from api.ui.deps import UiUserDep, choice, ui_id
from api.ui.forms import Form, see_other, textarea, validated
from api.ui.render import PAGE_SIZE, page
from elephantasm.db.models import EVENT_TYPES
from elephantasm.schemas.animas import AnimaCreate
from elephantasm.services import animas as anima_svc
from elephantasm.services import events as event_svc
from elephantasm.services.dreams import identity as identity_svc
from elephantasm.services.dreams import queries as dream_svc
from elephantasm.services.inspector import AnimaCounts, anima_counts, memories_of_event

# The list counts each anima's rows up to this many (exact counts are on the anima's own page).
LIST_COUNT_CAP = 1_000


@dataclass
class CreateForm:
    """The new-anima form."""

    name: str = ""
    description: str = ""


class AnimaPages(Controller):
    """``/ui/animas…`` and ``/ui/events/{id}``."""

    path = "/"

    @get("/", include_in_schema=False)
    async def home(self) -> Response:
        """The inspector starts at the anima list."""
        return see_other("/ui/animas")

    @get("/animas")
    async def animas(self, ui: UiUserDep, runtime: RuntimeDep, cursor: Cursor = None) -> Response:
        """Every anima of the org with its counts, last event and state_version (paginated)."""
        async with runtime.read_session() as session:
            rows, next_cursor = await anima_svc.list_animas(session, ui.caller.org_id, PAGE_SIZE, cursor)
            counts = await anima_counts(session, ui.caller.org_id, [a.id for a in rows], cap=LIST_COUNT_CAP)
        return page(
            "animas.html",
            ui=ui,
            animas=rows,
            counts=counts,
            empty=AnimaCounts(),
            next_cursor=next_cursor,
            cursor=cursor,
            cap=LIST_COUNT_CAP,
        )

    @post("/animas")
    async def create(self, ui: UiUserDep, runtime: RuntimeDep, data: Annotated[CreateForm, Form]) -> Response:
        """Create an anima, as ``POST /api/animas`` does (same rules); then open it."""
        fields = validated(AnimaCreate, name=data.name.strip(), description=textarea(data.description).strip() or None)
        async with runtime.unit_of_work() as session:
            anima = await anima_svc.create_anima(session, ui.caller.org_id, fields)
        return see_other(f"/ui/animas/{anima.id}")

    @get("/animas/{anima_id:str}")
    async def anima(self, anima_id: FromPath[str], ui: UiUserDep, runtime: RuntimeDep) -> Response:
        """One anima: counts, current identity, the latest dream run, links to every view."""
        aid = ui_id("anima", anima_id)
        async with runtime.read_session() as session:
            anima = await anima_svc.get_anima(session, ui.caller.org_id, aid)
            counts = (await anima_counts(session, ui.caller.org_id, [aid])).get(aid, AnimaCounts())
            identity = await identity_svc.current_identity(session, ui.caller.org_id, aid)  # None before the first
            runs, _ = await dream_svc.list_runs(session, ui.caller.org_id, aid, None, 1, None)
        return page(
            "anima.html",
            ui=ui,
            anima=anima,
            counts=counts,
            identity=identity,
            last_run=runs[0] if runs else None,
            tab="overview",
        )

    @get("/animas/{anima_id:str}/events")
    async def timeline(
        self,
        anima_id: FromPath[str],
        ui: UiUserDep,
        runtime: RuntimeDep,
        session_id: Annotated[str | None, QueryParameter(max_length=200)] = None,
        event_type: Annotated[str | None, QueryParameter(max_length=32)] = None,
        since: Annotated[date | None, QueryParameter(description="Events on or after this day (UTC).")] = None,
        cursor: Cursor = None,
    ) -> Response:
        """The anima's events in the order they happened, filtered by session, type and first day, 50 a page."""
        aid = ui_id("anima", anima_id)
        session_id, event_type = session_id or None, choice("event_type", event_type, EVENT_TYPES)
        start = datetime.combine(since, time.min, UTC) if since else None
        flt = event_svc.EventFilter(anima_id=aid, session_id=session_id, event_type=event_type, since=start)
        async with runtime.read_session() as session:
            anima = await anima_svc.get_anima(session, ui.caller.org_id, aid)
            rows, next_cursor = await event_svc.list_events(session, ui.caller.org_id, flt, PAGE_SIZE, cursor)
        return page(
            "events.html",
            ui=ui,
            anima=anima,
            events=rows,
            next_cursor=next_cursor,
            cursor=cursor,
            session_id=session_id or "",
            event_type=event_type or "",
            event_types=EVENT_TYPES,
            since=since.isoformat() if since else "",
            tab="events",
        )

    @get("/events/{event_id:str}")
    async def event(self, event_id: FromPath[str], ui: UiUserDep, runtime: RuntimeDep) -> Response:
        """One event in full, and the memories distilled from it."""
        eid = ui_id("event", event_id)
        async with runtime.read_session() as session:
            event = await event_svc.get_event(session, ui.caller.org_id, eid)
            anima = await anima_svc.get_anima(session, ui.caller.org_id, event.anima_id)
            memories = await memories_of_event(session, ui.caller.org_id, eid)
        return page("event.html", ui=ui, anima=anima, event=event, memories=memories, tab="events")
