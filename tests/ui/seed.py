"""A small, realistic anima for the inspector tests: three conversations dreamed into memories,
knowledge with a superseded fact (Paris → Berlin), identity versions and dream runs."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from elephantasm.db.models import Event, IdentityVersion, Knowledge, Memory
from elephantasm.db.scopes import of_anima
from elephantasm.runtime import Runtime
from elephantasm.services.dreams import run_dream
from elephantasm.services.dreams.identity import _write_version
from tests.dreams.helpers import add_events, new_anima, turns

CONVERSATIONS = [
    (
        "trip",
        [
            "Hi! I live in Paris and my favorite color is teal.",
            "Nice to meet you. Paris is lovely.",
            "Can you help me plan a trip to Rome next month?",
            "Certainly. Rome in spring is wonderful.",
            "Please remember I prefer trains over planes.",
            "Noted: trains over planes.",
        ],
    ),
    (
        "move",
        [
            "I moved to Berlin last week.",
            "Welcome to Berlin! How is the new flat?",
            "Great, and I started learning German.",
            "Viel Erfolg! I can quiz you on vocabulary.",
        ],
    ),
    (
        "work",
        [
            "Our team ships the billing migration on Friday.",
            "Good luck with the billing migration.",
            "Remind me to email Dana about the budget review.",
            "I will remind you about Dana and the budget.",
        ],
    ),
]


@dataclass(frozen=True)
class Seeded:
    """Ids of what the seed wrote (one of each kind the pages show)."""

    anima_id: uuid.UUID
    event_id: uuid.UUID
    memory_id: uuid.UUID
    knowledge_id: uuid.UUID
    superseded_id: uuid.UUID
    run_id: uuid.UUID
    identity_versions: int


async def seed_anima(runtime: Runtime, org_id: uuid.UUID, name: str = "assistant") -> Seeded:
    """Record the conversations days apart, dream after each, plus two undistilled turns."""
    anima_id = await new_anima(runtime, org_id, name)
    start = datetime.now(UTC) - timedelta(days=20)
    run = None
    for i, (session, texts) in enumerate(CONVERSATIONS):
        await add_events(runtime, org_id, anima_id, turns(texts, session=session, start=start + timedelta(days=6 * i)))
        run = await run_dream(runtime.dreams, org_id, anima_id, trigger="seed")
        assert run.status == "completed", run.error
    await add_events(
        runtime,
        org_id,
        anima_id,
        turns(
            ["What was I doing on Friday?", "Shipping the billing migration."],
            session="today",
            start=datetime.now(UTC) - timedelta(minutes=5),
        ),
    )
    assert run is not None
    # The offline engine writes no personality without evidence (≥ 50 of the anima's own messages), so
    # the second version the identity pages compare comes as an LLM engine's proposal would.
    async with runtime.unit_of_work() as session:
        evolved = {
            "personality_type": "Patient Planner",
            "communication_style": "concise, warm",
            "self": {},
            "prose": None,
        }
        await _write_version(session, org_id, anima_id, evolved, "seed: an engine's proposal", None, datetime.now(UTC))
    async with runtime.read_session() as session:
        event = (await session.execute(select(Event.id).where(*of_anima(Event, anima_id)).limit(1))).scalar_one()
        memory = (await session.execute(select(Memory.id).where(Memory.anima_id == anima_id).limit(1))).scalar_one()
        old = (
            await session.execute(
                select(Knowledge).where(Knowledge.anima_id == anima_id, Knowledge.superseded_by.is_not(None)).limit(1)
            )
        ).scalar_one()
        versions = len(
            (await session.execute(select(IdentityVersion.id).where(IdentityVersion.anima_id == anima_id))).all()
        )
    return Seeded(anima_id, event, memory, old.superseded_by, old.id, run.id, versions)


@dataclass(frozen=True)
class Small:
    """One dreamed conversation: an anima with memories and knowledge of its own to change."""

    anima_id: uuid.UUID
    memory_ids: list[uuid.UUID]
    knowledge_ids: list[uuid.UUID]


async def seed_small(runtime: Runtime, org_id: uuid.UUID, name: str = "scratch") -> Small:
    """The "move" conversation (Berlin, German) recorded and dreamed once."""
    anima_id = await new_anima(runtime, org_id, name)
    _, texts = CONVERSATIONS[1]
    await add_events(
        runtime, org_id, anima_id, turns(texts, session="move", start=datetime.now(UTC) - timedelta(days=1))
    )
    run = await run_dream(runtime.dreams, org_id, anima_id, trigger="seed")
    assert run.status == "completed", run.error
    async with runtime.read_session() as session:
        memories = (await session.execute(select(Memory.id).where(Memory.anima_id == anima_id))).scalars().all()
        knowledge = (await session.execute(select(Knowledge.id).where(Knowledge.anima_id == anima_id))).scalars().all()
    assert memories and knowledge
    return Small(anima_id, list(memories), list(knowledge))
