"""The pack-holding prompt prefix of an anima: compile the pack, render the system turn.

Chat packs leave out the session and temporal layers: the conversation itself is the session
(putting its turns in the pack too would repeat them), and a temporal line such as "2 hours ago"
changes with every recorded turn, which would make every turn's prefix new. What remains
(identity, knowledge, long-term memories) changes only when memory does, and it is listed oldest
first (``stable_context``) so that a change touches the prompt's tail, not its head.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from elephantasm.domain.kv.stable import oldest_first
from elephantasm.domain.render import Layer, layer_lines

if TYPE_CHECKING:
    from elephantasm.services.packs import PackRequest, Served
    from elephantasm.services.packs.service import Followup

CHAT_PACK_OVERRIDES = {"include_session": False, "include_temporal": False}


@dataclass(frozen=True)
class ChatPacks:
    """How chat compiles an anima's pack: the process's pack service (``services/packs``, bound by
    ``Runtime.chat_packs``) and the chat settings (``local_pack_*``, ``local_system_prompt``)."""

    request: Callable[..., PackRequest]
    """``build_request`` of the pack service."""
    compile: Callable[[PackRequest], Awaitable[Served]]
    """``compile_now`` of the pack service."""
    max_tokens: int
    preamble: str
    query_mode: str
    """``conversation`` or ``latest`` (``chat.pack_query``)."""


@dataclass(frozen=True)
class PackPrompt:
    """A compiled pack as a system prompt, with what pruning and manifests need to know of it."""

    fingerprint: str
    system: str
    context: str
    items: list[tuple[str, str, float]] = field(default_factory=list)
    """(item id, rendered text, score) of every knowledge and long-term item."""
    layer_counts: dict[str, int] = field(default_factory=dict)
    state_version: int = 0
    """The anima's state it was compiled from: what is made of it checks ``forget.still_current``."""

    def summary(self) -> str:
        """A short human description of what the pack holds."""
        c = self.layer_counts
        return (
            f"{c.get('knowledge', 0)} knowledge items, {c.get('long_term', 0)} long-term memories, "
            f"identity: {'yes' if c.get('identity') else 'no'}"
        )


def system_text(preamble: str, context: str) -> str:
    """The system turn: the configured preamble, then the pack text (if any)."""
    return f"{preamble}\n\n{context}" if context.strip() else preamble


def _items(content: dict[str, Any], context: str, key: str, layer: Layer, text: str) -> list[tuple[str, str, float]]:
    """(id, text as rendered, score) of one layer's items. The block lists them in the wire's order,
    one line each; the line is what the prompt holds (a memory may render as the turn that matched
    the query, not its summary), so pruning and forgetting find it. Without a matching block the
    stored text stands in."""
    wire = content.get(key) or []
    lines = layer_lines(context, layer)
    if len(lines) != len(wire):
        lines = [str(w[text]) for w in wire]
    return [(str(w["id"]), line, float(w["score"])) for w, line in zip(wire, lines, strict=True)]


def stable_context(content: dict[str, Any], context: str) -> str:
    """The pack text with knowledge and long-term lines oldest first (see ``domain.kv.stable``)."""
    ids = {
        Layer.KNOWLEDGE: [str(w["id"]) for w in content.get("knowledge") or []],
        Layer.LONG_TERM: [str(w["id"]) for w in content.get("long_term_memories") or []],
    }
    return oldest_first(context, ids)


def _from_body(body: dict[str, Any], preamble: str) -> PackPrompt:
    content = body.get("content") or {}
    ranked = body.get("context") or ""  # the wire's order: its lines pair with the content lists
    items = _items(content, ranked, "knowledge", Layer.KNOWLEDGE, "content")
    items += _items(content, ranked, "long_term_memories", Layer.LONG_TERM, "summary")
    context = stable_context(content, ranked)
    counts = {
        "identity": int(bool(body.get("has_identity"))),
        "knowledge": int(body.get("knowledge_count") or 0),
        "long_term": int(body.get("long_term_memory_count") or 0),
    }
    return PackPrompt(
        body["fingerprint"], system_text(preamble, context), context, items, counts, body["state_version"]
    )


async def pack_prompt(
    packs: ChatPacks, org_id: uuid.UUID, anima_id: uuid.UUID, query: str | None, session_id: str | None = None
) -> PackPrompt:
    """Compile (or serve from the pack cache) the anima's chat pack for ``query``; 404 if not found."""
    pack, followup = await pack_prompt_later(packs, org_id, anima_id, query, session_id)
    if followup is not None:
        await followup()
    return pack


async def pack_prompt_later(
    packs: ChatPacks, org_id: uuid.UUID, anima_id: uuid.UUID, query: str | None, session_id: str | None = None
) -> tuple[PackPrompt, Followup | None]:
    """:func:`pack_prompt`, leaving the record of a fresh compile (``followup``) for the caller to
    run when it suits it: a chat turn runs it after the reply."""
    req = packs.request(
        org_id,
        anima_id,
        query=(query or "")[:4000] or None,
        overrides=CHAT_PACK_OVERRIDES,
        max_tokens=packs.max_tokens,
        session_id=session_id,
    )
    served = await packs.compile(req)
    return _from_body(json.loads(served.body), packs.preamble), served.followup
