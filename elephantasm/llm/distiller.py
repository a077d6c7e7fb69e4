"""The LLM distillation engine: several exchanges per call, structured JSON out, provenance checked.

Each call shows numbered events and asks for JSON of a strict schema; every memory and knowledge
item must cite the indices it came from, and a reply that cites unknown ones or breaks the schema is
retried. Events the model left uncovered get an offline memory; the identity update rides on a
run's last call. A batch that finally fails fails the whole run.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Annotated, Any

import openai
from pydantic import AfterValidator, BaseModel, Field

from elephantasm.domain.dreaming.batching import BatchLimits, batch_groups, render_event
from elephantasm.domain.dreaming.grouping import TokenCounter, approx_tokens, event_order, group_events
from elephantasm.domain.dreaming.knowledge_rules import dedupe_drafts
from elephantasm.domain.dreaming.offline import memory_from_group
from elephantasm.domain.dreaming.text import shorten
from elephantasm.domain.dreaming.types import (
    DistillError,
    DistillResult,
    EventInput,
    IdentityDraft,
    KnowledgeDraft,
    KnowledgeType,
    MemoryDraft,
    Usage,
)

from .client import ChatCaller, MalformedReply, RetryPolicy

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam
    from openai.types.shared_params import ResponseFormatJSONSchema

__all__ = ["DistillError", "LLMEngine", "SYSTEM_PROMPT"]


def _unit(value: float) -> float:
    return min(1.0, max(0.0, value))


Unit = Annotated[float, AfterValidator(_unit)]  # a model's 1.02 is clamped, not worth a retry


class MemoryOut(BaseModel):
    """One memory as the model returns it."""

    summary: str = Field(min_length=1)
    content: str
    importance: Unit
    confidence: Unit
    event_indices: list[int] = Field(min_length=1)


class KnowledgeOut(BaseModel):
    """One knowledge item as the model returns it."""

    type: KnowledgeType
    topic: str
    subject_key: str | None
    value: str | None
    content: str = Field(min_length=1)
    confidence: Unit
    importance: Unit
    event_indices: list[int] = Field(min_length=1)


class IdentityOut(BaseModel):
    """The anima's updated identity as the model proposes it."""

    personality_type: str
    communication_style: str
    self_reflection: str
    traits: list[str]
    prose: str
    reason: str


class BatchReply(BaseModel):
    """A reply for one batch of events."""

    memories: list[MemoryOut]
    knowledge: list[KnowledgeOut]


class FinalBatchReply(BatchReply):
    """The last batch's reply also carries the identity (``null``: no change)."""

    identity: IdentityOut | None


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema in OpenAI's strict form: every property required, no extras.

    Keywords strict mode rejects (``minLength``) are dropped; pydantic still enforces them.
    """

    def fix(node: Any) -> Any:
        if isinstance(node, dict):
            node = {k: fix(v) for k, v in node.items() if k not in ("title", "default", "minLength")}
            if node.get("type") == "object" and "properties" in node:
                node["additionalProperties"] = False
                node["required"] = list(node["properties"])
            return node
        return [fix(v) for v in node] if isinstance(node, list) else node

    return fix(model.model_json_schema())


def _response_format(model: type[BaseModel], name: str) -> ResponseFormatJSONSchema:
    return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": strict_schema(model)}}


SYSTEM_PROMPT = """You are the memory distiller of an AI agent (an "anima"). You read a log of events \
(messages, tool calls) numbered [index] and write what the agent should remember, as JSON.
Rules:
- memories: group consecutive related events of ONE session into exchanges of a few turns (2-8 events). \
Never make one memory for a whole long session. Every event index shown must be cited by at least one \
memory's event_indices; cite only indices shown.
- summary: one or two sentences saying who said or did what. content: a faithful fuller account. \
importance and confidence are numbers in [0, 1].
- knowledge: durable statements worth keeping (type FACT, CONCEPT, METHOD, PRINCIPLE or EXPERIENCE), each \
citing the event_indices it comes from. For an attribute that can change (where someone lives, a preference, \
a name, a plan's date) give subject_key as a lowercase dotted key such as "user.home_city", \
"user.favorite_color", "user.opinion.sushi", "user.plan.visit_rome", and value as the attribute's value; \
otherwise null for both.
- identity (only when the schema asks for it): update the agent's own personality_type, communication_style, \
self_reflection, traits and prose from how the agent writes and what it has learned; give the reason for the \
change, or null when nothing should change."""


class LLMEngine:
    """Distils events with any OpenAI-compatible chat endpoint (implements ``DistillEngine``);
    ``client`` comes from :func:`~.client.build_client`."""

    name = "llm"

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        model: str,
        max_retries: int = 3,
        timeout: float = 60.0,
        token_counter: TokenCounter = approx_tokens,
        *,
        limits: BatchLimits | None = None,
        backoff_base: float = 0.5,
        backoff_max: float = 20.0,
        temperature: float | None = 0.0,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.model = model
        self._count = token_counter
        self._limits = limits or BatchLimits()
        policy = RetryPolicy(max_retries=max_retries, base_delay=backoff_base, max_delay=backoff_max)
        self._caller = ChatCaller(client, model, policy, timeout, temperature, sleep, rng or random.Random())

    async def distil(self, events: list[EventInput], existing_identity: IdentityDraft | None) -> DistillResult:
        """Distil all ``events`` or raise :class:`DistillError` (with the usage spent); never partial."""
        if len({e.index for e in events}) != len(events):
            raise ValueError("event indices must be unique within a run")
        if not events:
            return DistillResult(memories=(), knowledge=())
        caller = replace(self._caller, usage=Usage())  # usage is counted per run
        batches = batch_groups(group_events(events, self._count), self._count, self._limits)
        memories: list[MemoryDraft] = []
        knowledge_out: list[tuple[KnowledgeOut, list[EventInput]]] = []
        fallback: list[EventInput] = []
        identity: IdentityDraft | None = None
        for number, batch in enumerate(batches):
            final = number == len(batches) - 1
            try:
                reply = await self._call(caller, batch, memories, existing_identity if final else None, final)
            except DistillError as exc:
                raise DistillError(
                    f"batch {number + 1}/{len(batches)}: {exc}", usage=caller.usage, attempts=exc.attempts
                ) from exc
            by_index = {e.index: e for e in batch}
            memories.extend(self._memory(m, by_index) for m in reply.memories)
            knowledge_out.extend((k, [by_index[i] for i in k.event_indices]) for k in reply.knowledge)
            fallback.extend(self._uncovered(batch, reply))
            if final and isinstance(reply, FinalBatchReply) and reply.identity is not None:
                identity = _identity(reply.identity, existing_identity)
        for group in group_events(fallback, self._count):
            memories.append(memory_from_group(group, {"engine": "offline", "fallback": "uncovered by llm"}))
        return DistillResult(
            memories=tuple(memories),
            knowledge=tuple(dedupe_drafts(_knowledge(k, cited, memories) for k, cited in knowledge_out)),
            usage=caller.usage,
            identity=identity,
            fallback_event_ids=tuple(e.id for e in sorted(fallback, key=event_order)),
        )

    async def _call(
        self,
        caller: ChatCaller,
        batch: list[EventInput],
        earlier: Sequence[MemoryDraft],
        identity: IdentityDraft | None,
        final: bool,
    ) -> BatchReply:
        model: type[BatchReply] = FinalBatchReply if final else BatchReply
        valid = {e.index for e in batch}

        def parse(text: str) -> BatchReply:
            try:
                reply = model.model_validate(json.loads(text))
            except json.JSONDecodeError as exc:
                raise MalformedReply(f"reply is not JSON: {exc}") from exc
            if not reply.memories:
                raise MalformedReply("reply has no memories")
            cited: tuple[MemoryOut | KnowledgeOut, ...] = (*reply.memories, *reply.knowledge)
            for item in cited:
                unknown = set(item.event_indices) - valid
                if unknown:
                    raise MalformedReply(f"reply cites unknown event indices {sorted(unknown)}")
            return reply

        name = "distillation_final" if final else "distillation"
        messages: list[ChatCompletionMessageParam] = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": self._prompt(batch, earlier, identity, final)},
        ]
        return await caller.call(messages, _response_format(model, name), parse)

    @staticmethod
    def _prompt(
        batch: list[EventInput], earlier: Sequence[MemoryDraft], identity: IdentityDraft | None, final: bool
    ) -> str:
        parts = ["Events:", *(render_event(e) for e in batch)]
        if final:
            recent = sorted(earlier, key=lambda m: (-m.importance, m.time_end))[:20]
            if recent:
                parts += [
                    "",
                    "Memories distilled earlier in this run:",
                    *(f"- {shorten(m.summary, 200)}" for m in sorted(recent, key=lambda m: m.time_end)),
                ]
            current = (
                None
                if identity is None
                else {
                    "personality_type": identity.personality_type,
                    "communication_style": identity.communication_style,
                    "self_reflection": identity.self.get("self_reflection"),
                    "traits": identity.self.get("traits"),
                    "prose": identity.prose,
                }
            )
            parts += ["", "Current identity: " + json.dumps(current, sort_keys=True, default=str)]
        return "\n".join(parts)

    def _memory(self, out: MemoryOut, by_index: dict[int, EventInput]) -> MemoryDraft:
        cited = sorted({by_index[i] for i in out.event_indices}, key=event_order)
        sessions = {e.session_id for e in cited}
        return MemoryDraft(
            summary=out.summary.strip(),
            content=out.content.strip() or out.summary.strip(),
            importance=round(out.importance, 4),
            confidence=round(out.confidence, 4),
            time_start=cited[0].occurred_at,
            time_end=cited[-1].occurred_at,
            session_id=cited[0].session_id if len(sessions) == 1 else None,
            event_ids=tuple(e.id for e in cited),
            meta={"engine": "llm", "model": self.model},
        )

    @staticmethod
    def _uncovered(batch: list[EventInput], reply: BatchReply) -> list[EventInput]:
        covered = {i for m in reply.memories for i in m.event_indices}
        return [e for e in batch if e.index not in covered]


def _knowledge(out: KnowledgeOut, cited: list[EventInput], memories: Sequence[MemoryDraft]) -> KnowledgeDraft:
    ids = tuple(dict.fromkeys(e.id for e in sorted(cited, key=event_order)))
    wanted = set(ids)
    key = (out.subject_key or "").strip().lower().replace(" ", "_") or None
    return KnowledgeDraft(
        type=out.type,
        topic=out.topic.strip() or "general",
        subject_key=key,
        value=(out.value or "").strip() or None,
        content=out.content.strip(),
        summary=shorten(out.content.strip(), 120),
        confidence=round(out.confidence, 4),
        importance=round(out.importance, 4),
        source_event_ids=ids,
        source_memory_indices=tuple(i for i, m in enumerate(memories) if wanted.intersection(m.event_ids)),
    )


def _identity(out: IdentityOut, existing: IdentityDraft | None) -> IdentityDraft | None:
    """The proposed identity, or ``None`` when it changes nothing."""
    self_ = dict(existing.self) if existing else {}
    self_.update(self_reflection=out.self_reflection.strip(), traits=[t.strip() for t in out.traits])
    draft = IdentityDraft(
        personality_type=out.personality_type.strip(),
        communication_style=out.communication_style.strip(),
        self=self_,
        prose=out.prose.strip(),
        reason=out.reason.strip() or "updated by LLM",
    )
    if existing is not None and replace(draft, reason=existing.reason) == existing:
        return None
    return draft
