"""The MCP surface of Elephantasm: five tools and one resource, written once over our own SDK.

Every tool is a thin call to :class:`elephantasm_sdk.AsyncElephantasm`, so authentication,
validation, tenancy and error text are exactly the HTTP API's. The transport gives the client
(:data:`ClientSource`): the stdio bridge one from the environment, ``/mcp`` one per caller's key.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError, ToolError
from pydantic import BaseModel, Field

from elephantasm_sdk import AsyncElephantasm, ElephantasmError

ClientSource = Callable[[Context], Awaitable[AsyncElephantasm]]
"""Gives the SDK client to use for one tool call (the caller closes nothing: the source owns it)."""

INSTRUCTIONS = (
    "Long-term memory for this agent. Call `recall` with the user's message before answering to get what "
    "you should remember (identity, knowledge, relevant memories, recent turns); call `remember` with each "
    "user and assistant message afterwards. `list_animas` shows which memories (animas) you can use."
)
PACK_URI = "elephantasm://animas/{anima_id}/pack"

EventType = Literal["message.in", "message.out", "tool.call", "tool.result", "system"]


class EventIn(BaseModel):
    """One thing that happened, to be remembered."""

    content: str = Field(description="What was said or done, verbatim.")
    event_type: EventType = Field(default="message.in", description="message.in (user), message.out (agent), …")
    role: str | None = Field(default=None, description="user, assistant, tool or system")
    author: str | None = None
    session_id: str | None = Field(default=None, description="Conversation id; turns of one session stay together.")
    occurred_at: datetime | None = Field(default=None, description="When it happened (default: now).")
    importance_score: float | None = Field(default=None, ge=0, le=1)
    meta: dict[str, Any] | None = None


def _message(exc: ElephantasmError) -> str:
    """The API's status and detail, as the client is told them."""
    status = f"HTTP {exc.status_code}: " if exc.status_code else ""
    return f"{status}{exc.detail if isinstance(exc.detail, str) else exc.message}"


@asynccontextmanager
async def _calling(source: ClientSource, ctx: Context, resource: bool = False) -> AsyncIterator[AsyncElephantasm]:
    """The client for this call, with API errors turned into the protocol's tool or resource errors:
    the client reads the API's detail and no traceback is logged; a missing (or another org's)
    anima is a resource's not-found."""
    client = await source(ctx)
    try:
        yield client
    except ElephantasmError as exc:
        if not resource:
            raise ToolError(_message(exc)) from exc
        raise (ResourceNotFoundError if exc.status_code == 404 else ResourceError)(_message(exc)) from exc


_EVENT_SUMMARY = {"id", "anima_id", "event_type", "session_id"}


def _memory_summary(memory: Any) -> dict[str, Any]:
    return {
        "id": str(memory.id),
        "summary": memory.summary,
        "content": memory.content,
        "state": memory.state,
        "importance": memory.importance,
        "confidence": memory.confidence,
        "similarity": memory.similarity,
        "time_start": memory.time_start.isoformat() if memory.time_start else None,
    }


def register_tools(server: MCPServer, source: ClientSource) -> None:
    """Add the five tools to ``server``."""

    @server.tool()
    async def remember(anima_id: str, events: list[EventIn], ctx: Context) -> list[dict[str, Any]]:
        """Record one or more events (messages, tool calls) in an anima's memory, in order."""
        if not events:
            raise ToolError("events: give at least one event")
        async with _calling(source, ctx) as client:
            if len(events) == 1:
                stored = [await client.events.extract(anima_id=anima_id, **events[0].model_dump(exclude_none=True))]
            else:
                stored = await client.events.batch([e.model_dump(exclude_none=True) for e in events], anima_id=anima_id)
        return [e.model_dump(mode="json", include=_EVENT_SUMMARY) for e in stored]

    @server.tool()
    async def recall(
        anima_id: str, ctx: Context, query: str | None = None, max_tokens: int | None = None, preset: str | None = None
    ) -> str:
        """What the agent should remember now: the memory pack rendered for a prompt, within max_tokens."""
        async with _calling(source, ctx) as client:
            pack = await client.packs.inject(anima_id, query=query, preset=preset, max_tokens=max_tokens)
        return pack.as_prompt() if pack is not None else ""

    @server.tool()
    async def search_memories(query: str, anima_id: str, ctx: Context, limit: int = 10) -> list[dict[str, Any]]:
        """Memories of an anima that match a query (hybrid semantic + full-text), best first."""
        async with _calling(source, ctx) as client:
            found = await client.memories.search(query, anima_id=anima_id, limit=limit)
        return [_memory_summary(m) for m in found]

    @server.tool()
    async def forget_memory(memory_id: str, ctx: Context) -> dict[str, Any]:
        """Delete one memory for good (its source events stay)."""
        async with _calling(source, ctx) as client:
            await client.memories.delete(memory_id)
        return {"deleted": memory_id}

    @server.tool()
    async def list_animas(ctx: Context, limit: int = 100) -> list[dict[str, Any]]:
        """The animas (agent memories) this key can use."""
        async with _calling(source, ctx) as client:
            animas = await client.animas.list(limit=limit).first_page()
        return [{"id": str(a.id), "name": a.name, "description": a.description} for a in animas.items]


def register_resources(server: MCPServer, source: ClientSource) -> None:
    """Add the latest-pack resource to ``server``."""

    @server.resource(
        PACK_URI,
        name="latest_pack",
        mime_type="application/json",
        description="The latest memory pack of an anima (JSON; `context` is the prompt text).",
    )
    async def latest_pack(anima_id: str, ctx: Context) -> str:
        async with _calling(source, ctx, resource=True) as client:
            pack = await client.packs.inject(anima_id)
        return pack.model_dump_json() if pack is not None else "null"


def build_server(source: ClientSource) -> MCPServer:
    """An MCP server exposing Elephantasm through clients from ``source``."""
    server = MCPServer("elephantasm", instructions=INSTRUCTIONS, version="0.1.0")
    register_tools(server, source)
    register_resources(server, source)
    return server
