"""Memory-augmented chat with the local model (the use case behind ``/v1/chat/completions``).

Plan (async): compile the anima's pack, split the prompt into the pack-holding prefix and the
conversation suffix, find the snapshot sharing the longest prefix with the prompt. Run (one worker
thread, engine lock held throughout): restore the best KV source (the live cache of the last
turn, a conversation kept in memory, that snapshot), evaluate only the rest (capturing the system
turn's state when it is new), generate. Only then, after the reply: record the generation and
both turns as events (the user's turn alone if generation failed), the pack compile's record,
and the captured state as a new snapshot, so none of that delays the first token.
"""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from elephantasm.db.models import GenerationRow
from elephantasm.domain.errors import ValidationError
from elephantasm.domain.fingerprint import canonical_json, sha256_hex
from elephantasm.domain.kv.prefix_index import common_prefix
from elephantasm.domain.kv.snapshot import token_ids_hash
from elephantasm.local.engine import MIN_BATCH
from elephantasm.local.sampling import Sampling
from elephantasm.schemas.events import EventCreate
from elephantasm.services.events import record_events
from elephantasm.services.forget import still_current
from elephantasm.services.kv import snapshots
from elephantasm.services.kv.forgetting import FORGOTTEN_PREFIX
from elephantasm.services.kv.prefix import ChatPacks, PackPrompt, pack_prompt, pack_prompt_later
from elephantasm.services.kv.reuse import Primed, Prompt, Source, prime
from elephantasm.services.kv.snapshots import Prefix, SnapshotOf

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from elephantasm.db.engine import SessionFactory
    from elephantasm.local.engine import Generated, LocalEngine
    from elephantasm.local.holder import LocalModels
    from elephantasm.services.packs.service import Followup

ROLES = ("system", "user", "assistant")


@dataclass
class ChatPlan:
    """Everything a chat turn needs before the model runs."""

    org_id: uuid.UUID
    anima_id: uuid.UUID
    session_id: str
    turns: list[dict[str, str]]
    pack: PackPrompt
    prefix: Prefix
    suffix_text: str
    suffix_tokens: list[int]
    sampling: Sampling
    snapshot: Source | None
    followup: Followup | None = None
    """Records a fresh pack compile; run after the reply."""
    generation_id: uuid.UUID = field(default_factory=uuid.uuid4)

    @property
    def prompt(self) -> Prompt:
        return Prompt(self.prefix.tokens + self.suffix_tokens, len(self.prefix.tokens))

    @property
    def snapshot_of(self) -> SnapshotOf:
        return SnapshotOf(self.org_id, self.anima_id, self.prefix, self.pack)

    @property
    def user_text(self) -> str:
        return self.turns[-1]["content"]

    @property
    def conversation_key(self) -> str:
        """Dedupe stem of this turn: a retried request records its turns once."""
        return sha256_hex(canonical_json([str(self.anima_id), self.session_id, self.turns]))[:40]


def check_turns(messages: list[dict[str, Any]]) -> tuple[str | None, list[dict[str, str]]]:
    """(client system prompt, user/assistant turns); the last turn must be the user's."""
    system_parts, turns = [], []
    for i, m in enumerate(messages):
        role, content = m.get("role"), m.get("content")
        if role not in ROLES:
            raise ValidationError(f"messages[{i}].role: {role!r} is not one of {', '.join(ROLES)}")
        if not isinstance(content, str):
            raise ValidationError(f"messages[{i}].content: only text content is supported")
        if role == "system":
            system_parts.append(content)
        else:
            turns.append({"role": role, "content": content})
    if not turns or turns[-1]["role"] != "user":
        raise ValidationError("messages: the last message must be the user's")
    return ("\n\n".join(system_parts) or None), turns


def default_session(turns: list[dict[str, str]]) -> str:
    """A conversation's session id when the client names none: derived from its first turn."""
    return "chat-" + sha256_hex(turns[0]["content"])[:16]


def pack_query(mode: str, turns: list[dict[str, str]]) -> str:
    """The query the chat pack is compiled for.

    ``conversation`` (default): the first user turn, so the pack, and with it the cached KV prefix,
    stays the same for the whole conversation; a query that changes every turn reorders the pack
    by relevance and makes every turn's prefix new. ``latest``: the newest user turn.
    """
    if mode == "latest":
        return turns[-1]["content"]
    if mode != "conversation":
        raise ValidationError(f"local_pack_query: {mode!r} is not 'conversation' or 'latest'")
    return next(t["content"] for t in turns if t["role"] == "user")


async def plan_chat(
    packs: ChatPacks,
    read_session: SessionFactory,
    models: LocalModels,
    engine: LocalEngine,
    org_id: uuid.UUID,
    anima_id: uuid.UUID,
    messages: list[dict[str, Any]],
    sampling: Sampling,
    session_id: str | None,
) -> ChatPlan:
    """Compile the pack, split and tokenize the prompt, find the prefix's snapshot (when ``models``
    reuse KV states)."""
    client_system, turns = check_turns(messages)
    session = session_id or default_session(turns)
    pack, followup = await pack_prompt_later(packs, org_id, anima_id, pack_query(packs.query_mode, turns), session)
    if client_system:  # the client's own instructions follow the memory in the system turn
        pack = dataclasses.replace(pack, system=f"{pack.system}\n\n{client_system}")
    prefix_text, suffix_text = engine.split_prompt(pack.system, turns)
    prefix = await asyncio.to_thread(snapshots.make_prefix, engine, prefix_text)
    suffix_tokens = engine.tokenize_suffix(suffix_text)
    if len(prefix.tokens) + len(suffix_tokens) + 1 >= engine.n_ctx:
        raise ValidationError(
            f"messages: prompt of {len(prefix.tokens) + len(suffix_tokens)} tokens does not fit the local "
            f"model's context (n_ctx={engine.n_ctx})"
        )
    prompt = Prompt(prefix.tokens + suffix_tokens, len(prefix.tokens))
    usable = models.reuse and engine.reuse_ok
    snapshot = await snapshots.find_for(read_session, models, engine, org_id, prompt) if usable else None
    return ChatPlan(
        org_id, anima_id, session, turns, pack, prefix, suffix_text, suffix_tokens, sampling, snapshot, followup
    )


async def warm_next_pack(packs: ChatPacks, plan: ChatPlan) -> None:
    """Compile now, after the reply, the pack the conversation's next turn will ask for: recording
    this turn changed the anima's state, so that turn would otherwise compile it before its first
    token. Only when the query is the conversation's first turn (``latest`` changes every turn)."""
    if packs.query_mode == "conversation":
        await pack_prompt(packs, plan.org_id, plan.anima_id, pack_query("conversation", plan.turns), plan.session_id)


def run_chat(
    engine: LocalEngine,
    plan: ChatPlan,
    reuse: bool,
    report: Callable[[str, Any], None],
    should_stop: Callable[[], bool],
) -> tuple[Primed, Generated]:
    """The model work of one turn (blocking; call from a worker thread): the prompt into the cache
    from the best KV source (``reuse``: any at all), reported as ``ready`` (the :class:`Primed`),
    then the reply as it comes (``text`` pieces, then ``reply``: primed and generated), then, with
    reuse, the reply evaluated as prompt for the next turn (:func:`evaluate_reply`)."""
    with engine.lock:
        keep = (lambda: snapshots.header(engine, plan.prefix, plan.pack.fingerprint)) if reuse else None
        primed = prime(engine, plan.org_id, plan.prompt, plan.snapshot, keep, reuse=reuse)
        report("ready", primed)
        gen = engine.generate(plan.sampling, lambda text: report("text", text), should_stop)
        report("reply", (primed, gen))
        if reuse and engine.reuse_ok and gen.finish_reason != "cancelled":
            evaluate_reply(engine, plan, gen.text)
        return primed, gen


def evaluate_reply(engine: LocalEngine, plan: ChatPlan, reply: str) -> int:
    """Evaluate the reply's turn as the next turn's prompt will hold it, after the reply went out
    (caller holds the lock); returns how many tokens were evaluated.

    The reply's tokens were generated one by one, which llama.cpp computes with other numerics
    than a prompt batch, so the next turn could only reuse the cache up to this turn's prompt and
    would evaluate the reply again before its first token. Evaluated here as a batch, from the
    end of this prompt, their KV is what a full prefill of the next prompt computes; the next
    turn reuses it through the live cache like any prompt prefix (only tokens it really shares)."""
    turns = [*plan.turns, {"role": "assistant", "content": reply}]
    tokens = plan.prefix.tokens + engine.tokenize_suffix(engine.split_prompt(plan.pack.system, turns, cue=False)[1])
    start = common_prefix(engine.held(), tokens)
    if (
        start < len(plan.prompt.tokens) - MIN_BATCH
        or len(tokens) - start < MIN_BATCH
        or len(tokens) + MIN_BATCH >= engine.n_ctx
    ):
        return 0
    if engine.keep(start) != start:  # the cache no longer holds that prefix: nothing to build on
        return 0
    engine.extend(tokens[start:])
    return len(tokens) - start


def turn_events(plan: ChatPlan, output: str) -> list[EventCreate]:
    """The user's turn and, if the model said anything, the assistant's (deduplicated on retries)."""
    stem = f"chat:{plan.conversation_key}"
    meta = {"source": "chat", "generation_id": str(plan.generation_id), "pack_fingerprint": plan.pack.fingerprint}
    said = [("message.in", "user", plan.user_text)] + ([("message.out", "assistant", output)] if output.strip() else [])
    return [
        EventCreate(
            anima_id=plan.anima_id,
            event_type=event_type,
            role=role,
            content=content,
            session_id=plan.session_id,
            dedupe_key=f"{stem}:{role}",
            meta=meta,
        )
        for event_type, role, content in said
    ]


async def record_chat(
    session: AsyncSession, engine: LocalEngine, plan: ChatPlan, primed: Primed, gen: Generated, now: datetime
) -> None:
    """The generation row and the turn's events, in the caller's transaction. An item forgotten
    since the pack was compiled may be in its prefix: the prompt is then recorded as forgetting does."""
    tokens = plan.prompt.tokens
    kv = {"outcome": primed.status, "restored": primed.restored, "prefilled": primed.prefilled}
    prompt = {"prefix": plan.prefix.text, "suffix": plan.suffix_text, "session_id": plan.session_id, "kv": kv}
    if not await still_current(session, plan.anima_id, plan.pack.state_version):
        prompt |= FORGOTTEN_PREFIX
    session.add(
        GenerationRow(
            id=plan.generation_id,
            org_id=plan.org_id,
            anima_id=plan.anima_id,
            model_digest=engine.model_digest,
            pack_fingerprint=plan.pack.fingerprint,
            kv_status=primed.status,
            seed=plan.sampling.seed,
            sampling=plan.sampling.as_dict(),
            prompt_hash=token_ids_hash(tokens),
            prompt_tokens=len(tokens),
            prompt=prompt,
            output=gen.text,
            output_tokens=len(gen.tokens),
            finish_reason=gen.finish_reason,
        )
    )
    await session.flush()
    await record_events(session, plan.org_id, turn_events(plan, gen.text), now)


async def record_failed(session: AsyncSession, plan: ChatPlan, now: datetime) -> None:
    """A turn whose generation failed: the user's message is stored all the same."""
    await record_events(session, plan.org_id, turn_events(plan, ""), now)


def make_sampling(
    seed: int | None, temperature: float | None, top_p: float | None, max_tokens: int | None, default_max: int
) -> Sampling:
    """Sampling settings with OpenAI's defaults; a missing seed is drawn now and recorded."""
    return Sampling(
        seed=seed if seed is not None else secrets.randbits(31),
        temperature=1.0 if temperature is None else float(temperature),
        top_p=1.0 if top_p is None else float(top_p),
        max_tokens=max_tokens or default_max,
    )
