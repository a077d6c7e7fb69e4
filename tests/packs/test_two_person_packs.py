"""Packs of a long two-person chat (benchmarks.quality.duo): both names in most turns, small talk around
every fact. A question naming a participant and one rare word finds the turn that answers it in a small
pack; no pack line is small talk; no identity line without evidence; relative time is dated."""

from __future__ import annotations

import re
import uuid
from datetime import datetime, timedelta

import httpx
import pytest

from benchmarks.quality.dataset import Question
from benchmarks.quality.duo import CHATTER, RELATIVE, DuoConfig, generate_duo
from benchmarks.quality.pack_shares import is_filler_line
from elephantasm.domain.render import Layer, layer_lines
from elephantasm.runtime import Runtime
from elephantasm.schemas.events import EventCreate
from elephantasm.services.dreams import run_dream
from elephantasm.services.events import record_events
from tests.conftest import Tenant
from tests.packs.conftest import FROZEN_NOW
from tests.packs.helpers import latest

CONFIG = DuoConfig(conversations=1, sessions=10, turns_per_session=16, facts_per_person=3)


async def _record_and_dream(runtime: Runtime, tenant: Tenant, anima_id: uuid.UUID) -> dict[str, str]:
    """The generated chat, ending an hour before the frozen now, distilled; dataset event id → event id."""
    conv = generate_duo(CONFIG).conversations[0]
    shift = FROZEN_NOW - timedelta(hours=1) - datetime.fromisoformat(conv.turns()[-1].occurred_at)
    turns = [(s, t) for s in conv.sessions for t in s.turns]
    events = [
        EventCreate(
            anima_id=anima_id,
            event_type="message.in" if t.role == "user" else "message.out",
            role=t.role,
            author=t.author,
            content=t.content,
            session_id=s.session_id,
            occurred_at=datetime.fromisoformat(t.occurred_at) + shift,
        )
        for s, t in turns
    ]
    async with runtime.unit_of_work() as session:
        stored = await record_events(session, tenant.org_id, events, runtime.clock())
    run = await run_dream(runtime.dreams, tenant.org_id, anima_id)
    assert run.status == "completed", run.error
    return {t.event_id: str(e.row["id"]) for (_, t), e in zip(turns, stored, strict=True)}


def _cited(pack: dict) -> set[str]:
    content = pack["content"]
    items = content["long_term_memories"] + content["session_memories"] + content["knowledge"]
    return {str(p) for item in items for p in item["provenance"]}


@pytest.fixture
async def duo(pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict) -> dict[str, str]:
    return await _record_and_dream(pack_runtime, tenant, uuid.UUID(panima["id"]))


async def test_the_answering_turn_outranks_the_small_talk_that_names_the_same_person(
    pclient: httpx.AsyncClient, tenant: Tenant, panima: dict, duo: dict[str, str]
) -> None:
    questions: list[Question] = generate_duo(CONFIG).questions
    for q in questions:
        pack = (await latest(pclient, tenant, panima["id"], query=q.question, max_tokens=500)).json()
        assert duo[q.evidence_event_ids[0]] in _cited(pack), (q.question, pack["context"])
        for layer in (Layer.LONG_TERM, Layer.SESSION, Layer.KNOWLEDGE):
            for line in layer_lines(pack["context"], layer):
                assert not is_filler_line(layer, line), (q.question, line)


async def test_identity_without_evidence_is_the_name_alone(
    pclient: httpx.AsyncClient, tenant: Tenant, panima: dict, duo: dict[str, str]
) -> None:
    pack = (await latest(pclient, tenant, panima["id"], query="What is Jonas's dream?", max_tokens=1000)).json()
    assert layer_lines(pack["context"], Layer.IDENTITY) == [f"Name: {panima['name']}"]
    assert pack["layer_tokens"]["identity"] <= 0.05 * 1000


async def test_relative_time_is_dated_in_knowledge(
    pclient: httpx.AsyncClient, tenant: Tenant, panima: dict, duo: dict[str, str]
) -> None:
    relative = [q for q in generate_duo(CONFIG).questions if q.kind == RELATIVE]
    assert relative
    dated = 0
    for q in relative:
        pack = (await latest(pclient, tenant, panima["id"], query=q.question, max_tokens=1000)).json()
        lines = [line for line in layer_lines(pack["context"], Layer.KNOWLEDGE) if q.answer.lower() in line.lower()]
        dated += any("(≈ 20" in line for line in lines)
    assert dated >= len(relative) // 2  # "went to a pottery workshop (≈ 2025-…)" when a rule reads the turn


async def test_a_large_pack_serves_each_line_once_and_cites_every_turn_it_stands_for(
    pclient: httpx.AsyncClient, tenant: Tenant, panima: dict, duo: dict[str, str]
) -> None:
    conv = generate_duo(CONFIG).conversations[0]
    said: dict[str, set[str]] = {}  # "Author: content" → the events of every turn that said it
    for turn in conv.turns():
        said.setdefault(f"{turn.author}: {turn.content}", set()).add(duo[turn.event_id])
    repeated = {line for line, events in said.items() if len(events) > 1}
    assert repeated  # people repeat small talk across sessions
    standing_for = 0
    # A remark said again is served only when it is about the question: ask about the most repeated ones too.
    asked = sorted(repeated, key=lambda line: (-len(said[line]), line))[:3]
    queries = [q.question for q in generate_duo(CONFIG).questions[:6]] + [line.split(": ", 1)[1] for line in asked]
    for query in queries:
        pack = (await latest(pclient, tenant, panima["id"], query=query, max_tokens=2000)).json()
        for layer in (Layer.LONG_TERM, Layer.SESSION, Layer.KNOWLEDGE):
            lines = layer_lines(pack["context"], layer)
            assert len(lines) == len(set(lines)), (query, pack["context"])
        for item in pack["content"]["long_term_memories"]:
            if item["summary"] in repeated:
                cited = {str(p) for p in item["provenance"]}
                standing_for += cited >= said[item["summary"]]
    assert standing_for > 0  # a served line said again in other turns cites every one of them


async def test_a_large_queried_pack_has_no_chatter_said_again_and_again_nor_a_line_per_date(
    pclient: httpx.AsyncClient, tenant: Tenant, panima: dict, duo: dict[str, str]
) -> None:
    """Budget left over is no reason to serve "The race on TV yesterday was so boring" six times, dated,
    or "I had the weirdest dream last night" for a question about volunteering."""
    conv = generate_duo(CONFIG).conversations[0]
    days: dict[str, set[str]] = {}  # "Author: content" → the days it was said on
    for turn in conv.turns():
        days.setdefault(f"{turn.author}: {turn.content}", set()).add(turn.occurred_at[:10])
    names = {turn.author or "" for turn in conv.turns()}
    chatter = {f"{me}: {c.format(you=you)}" for me in names for you in names - {me} for c in CHATTER}
    habits = {line for line, said in days.items() if len(said) > 1 and line in chatter}
    assert habits  # the chat repeats its small talk on many days
    for q in generate_duo(CONFIG).questions:
        pack = (await latest(pclient, tenant, panima["id"], query=q.question, max_tokens=2000)).json()
        lines = [_DATE.sub("", line) for line in layer_lines(pack["context"], Layer.LONG_TERM)]
        assert len(lines) == len(set(lines)), (q.question, pack["context"])  # one line, not one per date
        asked = set(re.findall(r"[a-z]{4,}", q.question.lower()))
        for line in lines:
            if line in habits:  # chatter may stay only when it shares a word with the question
                assert asked & set(re.findall(r"[a-z]{4,}", line.lower())), (q.question, line)


_DATE = re.compile(r"^\(\d{4}-\d\d-\d\d\) ")


async def test_knowledge_is_not_served_for_naming_the_person_the_question_names(
    pclient: httpx.AsyncClient, tenant: Tenant, panima: dict, duo: dict[str, str]
) -> None:
    """ "Lena plans to sell their drawings at the market." answers nothing about "What is Lena's biggest
    fear?": a fact the pack serves shares a word with the question beyond the participants' names."""
    conv = generate_duo(CONFIG).conversations[0]
    names = {(turn.author or "").lower() for turn in conv.turns()}
    served = 0
    for q in generate_duo(CONFIG).questions:
        pack = (await latest(pclient, tenant, panima["id"], query=q.question, max_tokens=2000)).json()
        asked = set(re.findall(r"[a-z]{4,}", q.question.lower())) - names
        for line in layer_lines(pack["context"], Layer.KNOWLEDGE):
            served += 1
            assert asked & set(re.findall(r"[a-z]{4,}", line.lower())), (q.question, line)
    assert served  # the questions about facts still get them
