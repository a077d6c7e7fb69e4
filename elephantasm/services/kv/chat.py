"""Memory-augmented chat with the local model (the use case behind ``/v1/chat/completions``).

Plan (async): compile the anima's pack, split the prompt into the pack-holding prefix and the
conversation suffix, find the snapshot sharing the longest prefix with the prompt. Run (one worker
thread, engine lock held throughout): restore the best KV source (the live cache of the last
turn, a conversation kept in memory, that snapshot), evaluate only the rest, generate. Finish
(async): keep a new snapshot of the system turn, record the generation and both turns as events.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import secrets
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from elephantasm.domain.errors import StorageFullError, ValidationError
from elephantasm.domain.fingerprint import canonical_json, sha256_hex
from elephantasm.local.sampling import Sampling
from elephantasm.services.kv import snapshots
from elephantasm.services.kv.generations import record_chat
from elephantasm.services.kv.prefix import PackPrompt, pack_prompt
from elephantasm.services.kv.reuse import Primed, Prompt, Source, in_memory, prime
from elephantasm.services.kv.snapshots import Prefix

if TYPE_CHECKING:
    from elephantasm.local.engine import Generated, LocalEngine
    from elephantasm.runtime import Runtime

log = logging.getLogger(__name__)

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
    generation_id: uuid.UUID = field(default_factory=uuid.uuid4)

    @property
    def prompt(self) -> Prompt:
        return Prompt(self.prefix.tokens + self.suffix_tokens, len(self.prefix.tokens))

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
    runtime: Runtime,
    engine: LocalEngine,
    org_id: uuid.UUID,
    anima_id: uuid.UUID,
    messages: list[dict[str, Any]],
    sampling: Sampling,
    session_id: str | None,
) -> ChatPlan:
    """Compile the pack, split and tokenize the prompt, find the prefix's snapshot."""
    client_system, turns = check_turns(messages)
    session = session_id or default_session(turns)
    pack = await pack_prompt(runtime, org_id, anima_id, pack_query(runtime.settings.local_pack_query, turns), session)
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
    snapshot = None
    if runtime.settings.local_kv_snapshots and engine.reuse_ok:
        prompt = Prompt(prefix.tokens + suffix_tokens, len(prefix.tokens))
        held = in_memory(engine, org_id, prompt)  # a peek: disk is read only if it offers more
        snapshot = await snapshots.find(runtime, org_id, engine, prompt, held.claim if held else 0)
    return ChatPlan(org_id, anima_id, session, turns, pack, prefix, suffix_text, suffix_tokens, sampling, snapshot)


def run_chat(
    engine: LocalEngine,
    plan: ChatPlan,
    reuse: bool,
    on_ready: Callable[[Primed], None] | None = None,
    on_text: Callable[[str], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> tuple[Primed, Generated]:
    """The model work of one turn (blocking; call from a worker thread): the prompt into the cache
    from the best KV source (``reuse``: any at all), then the reply."""
    with engine.lock:
        keep = snapshots.keeper(engine, plan.prefix, plan.pack.fingerprint) if reuse else None
        primed = prime(engine, plan.org_id, plan.prompt, plan.snapshot, keep, reuse=reuse)
        if on_ready:
            on_ready(primed)
        return primed, engine.generate(plan.sampling, on_text, should_stop)


async def finish_chat(runtime: Runtime, engine: LocalEngine, plan: ChatPlan, primed: Primed, gen: Generated) -> None:
    """Keep the new snapshot, record the generation and the two turns. The snapshot is a cache: on
    a full store the turn is recorded and answered without it."""
    try:
        await snapshots.settle(
            runtime, plan.org_id, plan.anima_id, engine, plan.prefix, plan.pack, primed, plan.snapshot
        )
    except StorageFullError as exc:
        log.warning("KV snapshot not kept: %s", exc.detail)
    await record_chat(runtime, engine, plan, primed, gen)


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
