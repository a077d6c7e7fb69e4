"""``/api/events``: extract (single and batch) and read."""

from __future__ import annotations

import uuid

from litestar import Controller, MediaType, Response, get, post
from litestar.params import FromPath, FromQuery, JSONBody
from litestar.status_codes import HTTP_200_OK, HTTP_201_CREATED

from api.batch_body import EventBatchBody
from api.deps import CallerDep, Cursor, Limit, QueryInstant, RuntimeDep, one_of_param, parse_enum, parse_uuid
from api.event_json import encode_batch, encode_event
from api.guards import query_instant
from elephantasm.db.raw import driver_connection
from elephantasm.domain.enums import EventType
from elephantasm.domain.errors import NotFoundError, PayloadTooLargeError
from elephantasm.schemas.common import Page
from elephantasm.schemas.event_batch import BatchIn
from elephantasm.schemas.events import EventBatchCreate, EventBatchRead, EventCreate, EventRead
from elephantasm.services import events as svc
from elephantasm.services.event_copy import copy_events
from elephantasm.services.event_insert import insert_one


class EventController(Controller):
    """Record what happened to an anima, idempotently, and read it back."""

    path = "/api/events"
    tags = ["events"]

    @post("/", status_code=HTTP_201_CREATED)
    async def extract(self, data: JSONBody[EventCreate], caller: CallerDep, runtime: RuntimeDep) -> Response[EventRead]:
        """Record one event: 201 when new, 200 with the stored event when its dedupe_key exists."""
        svc.check_events([data], runtime.settings, runtime.clock())
        # The driver connection, no ORM session and no explicit transaction: the insert is one
        # statement that commits on its own before we answer (acknowledged = durable).
        async with driver_connection(runtime.engine) as conn:
            row, created = await insert_one(conn, caller.org_id, data, runtime.clock())
        if row is None:
            raise NotFoundError(f"anima {data.anima_id} not found")
        return Response(
            encode_event(row),  # type: ignore[arg-type]  # pre-encoded bytes; the annotation documents the schema
            status_code=HTTP_201_CREATED if created else HTTP_200_OK,
            media_type=MediaType.JSON,
        )

    @post("/batch", status_code=HTTP_201_CREATED, dto=EventBatchBody, return_dto=None)
    async def extract_batch(
        self, data: JSONBody[BatchIn | EventBatchCreate], caller: CallerDep, runtime: RuntimeDep
    ) -> Response[EventBatchRead]:
        """Record up to ``max_batch_events`` events in one transaction; one bad event writes none.

        201 when any event is new; 200 when every one was already stored (a replay, as for one event)."""
        limit = runtime.settings.max_batch_events
        if len(data.events) > limit:
            raise PayloadTooLargeError(f"events: {len(data.events)} events in one batch; the limit is {limit}")
        now = runtime.clock()
        metas: list[str] | None = None
        if isinstance(data, BatchIn):  # decoded by msgspec: meta is encoded once, here
            metas = svc.check_batch(data.events, runtime.settings, now)
        else:
            svc.check_events(data.events, runtime.settings, now)
        async with runtime.unit_of_work() as session:  # committed before the response: acknowledged = durable
            stored = await copy_events(await session.connection(), caller.org_id, data.events, runtime.clock(), metas)
        status = HTTP_201_CREATED if any(s.created for s in stored) else HTTP_200_OK
        return Response(encode_batch(stored), status_code=status, media_type=MediaType.JSON)  # type: ignore[arg-type]

    @get("/")
    async def list(
        self,
        caller: CallerDep,
        runtime: RuntimeDep,
        anima_id: FromQuery[uuid.UUID | None] = None,
        session_id: FromQuery[str | None] = None,
        event_type: one_of_param(EventType) = None,  # type: ignore[valid-type]
        since: QueryInstant("occurred_at ≥ since") = None,  # type: ignore[valid-type]
        until: QueryInstant("occurred_at < until") = None,  # type: ignore[valid-type]
        limit: Limit = 100,
        cursor: Cursor = None,
    ) -> Page[EventRead]:
        """Events in chronological order, filtered by anima, session, type and time range."""
        flt = svc.EventFilter(
            anima_id,
            session_id,
            parse_enum(EventType, "event_type", event_type),
            query_instant("since", since),
            query_instant("until", until),
        )
        async with runtime.read_session() as session:
            rows, next_cursor = await svc.list_events(session, caller.org_id, flt, limit, cursor)
        return Page[EventRead](items=[EventRead.model_validate(e) for e in rows], next_cursor=next_cursor)

    @get("/{event_id:str}")
    async def get(self, event_id: FromPath[str], caller: CallerDep, runtime: RuntimeDep) -> EventRead:
        """Read one event."""
        async with runtime.read_session() as session:
            event = await svc.get_event(session, caller.org_id, parse_uuid("event_id", event_id))
        return EventRead.model_validate(event)
