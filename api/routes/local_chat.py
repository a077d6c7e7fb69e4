"""OpenAI-compatible chat on the local model, with the anima's memory: ``/v1/chat/completions``
(plain and SSE streaming) and ``/v1/models``. Authenticated with our API key (Bearer)."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import TYPE_CHECKING

from litestar import Controller, MediaType, Request, Response, get, post
from litestar.params import JSONBody
from litestar.response import Stream
from litestar.status_codes import HTTP_200_OK

from api.deps import CallerDep, RuntimeDep, parse_uuid
from elephantasm.domain.errors import ValidationError
from elephantasm.local.model import resolve_model_path
from elephantasm.schemas.local import ChatCompletionRequest, chunk_body, completion_body
from elephantasm.services.kv.chat import ChatPlan, make_sampling, plan_chat
from elephantasm.services.kv.streaming import ChatStream, chat_stream

if TYPE_CHECKING:
    from elephantasm.local.engine import LocalEngine
    from elephantasm.runtime import Runtime
    from elephantasm.services.kv.reuse import Primed

ANIMA_HEADER = "x-elephantasm-anima"
SESSION_HEADER = "x-elephantasm-session"


def _anima_id(data: ChatCompletionRequest, request: Request) -> uuid.UUID:
    chosen = request.headers.get(ANIMA_HEADER) or data.user
    if not chosen:
        raise ValidationError("user: name the anima (its id) in 'user' or in the X-Elephantasm-Anima header")
    return parse_uuid("user" if not request.headers.get(ANIMA_HEADER) else "X-Elephantasm-Anima", chosen)


def _headers(plan: ChatPlan, primed: Primed) -> dict[str, str]:
    return {
        "X-Elephantasm-Pack": plan.pack.fingerprint,
        "X-Elephantasm-KV": primed.status,
        "X-Elephantasm-KV-Restored": str(primed.restored),
        "X-Elephantasm-KV-Prefilled": str(primed.prefilled),
        "X-Elephantasm-Generation": str(plan.generation_id),
    }


def _usage(plan: ChatPlan, completion_tokens: int) -> dict[str, int]:
    prompt = len(plan.prefix.tokens) + len(plan.suffix_tokens)
    return {"prompt_tokens": prompt, "completion_tokens": completion_tokens, "total_tokens": prompt + completion_tokens}


def _sse(obj: object) -> bytes:
    return f"data: {json.dumps(obj, ensure_ascii=False)}\n\n".encode()


class LocalChatController(Controller):
    """The OpenAI-compatible surface of the local model."""

    path = "/v1"
    tags = ["local model"]

    @get("/models")
    async def models(self, caller: CallerDep, runtime: RuntimeDep) -> dict:
        """The one local model (503 when the extra or the model is missing)."""
        path = resolve_model_path(runtime.settings.local_model_path)
        return {"object": "list", "data": [{"id": path.stem, "object": "model", "created": 0, "owned_by": "local"}]}

    @post("/chat/completions", status_code=HTTP_200_OK)
    async def chat_completions(
        self, data: JSONBody[ChatCompletionRequest], request: Request, caller: CallerDep, runtime: RuntimeDep
    ) -> Response:
        """Chat with the local model; the anima's pack is the system prompt, its KV state restored."""
        anima_id = _anima_id(data, request)
        session_id = request.headers.get(SESSION_HEADER)
        if not data.stream:
            body, headers = await complete_chat(runtime, caller.org_id, anima_id, data, session_id)
            return Response(body, media_type=MediaType.JSON, headers=headers)
        engine, plan, stream, primed = await _start(runtime, caller.org_id, anima_id, data, session_id)
        return Stream(
            _events(stream, plan, engine.path.stem), media_type="text/event-stream", headers=_headers(plan, primed)
        )


async def _start(
    runtime: Runtime, org_id: uuid.UUID, anima_id: uuid.UUID, data: ChatCompletionRequest, session_id: str | None
) -> tuple[LocalEngine, ChatPlan, ChatStream, Primed]:
    """Plan the turn and start the model; returns once the prompt is in the KV cache."""
    engine = await runtime.local.aengine()
    max_tokens = data.max_completion_tokens or data.max_tokens
    sampling = make_sampling(data.seed, data.temperature, data.top_p, max_tokens, runtime.settings.local_max_tokens)
    messages = [m.model_dump() for m in data.messages]
    packs = runtime.chat_packs
    deps = (packs, runtime.read_session, runtime.local, engine)
    plan = await plan_chat(*deps, org_id, anima_id, messages, sampling, session_id)
    stream = chat_stream(runtime.unit_of_work, runtime.local, packs, runtime.clock, engine, plan)
    return engine, plan, stream, await stream.start()


async def complete_chat(
    runtime: Runtime, org_id: uuid.UUID, anima_id: uuid.UUID, data: ChatCompletionRequest, session_id: str | None
) -> tuple[dict, dict[str, str]]:
    """One non-streaming ``/v1/chat/completions`` turn: the response body and its ``X-Elephantasm-*``
    headers (``X-Elephantasm-KV``: whether the pack's KV state was restored). The inspector's chat
    page calls this too, so both go the same way."""
    engine, plan, stream, primed = await _start(runtime, org_id, anima_id, data, session_id)
    async for _ in stream.pieces():
        pass
    assert stream.generated is not None  # the stream ran to its end
    gen = stream.generated
    usage = _usage(plan, len(gen.tokens))
    body = completion_body(
        plan.generation_id, engine.path.stem, gen.text, gen.finish_reason, usage, plan.pack.fingerprint
    )
    return body, _headers(plan, primed)


async def _events(stream: ChatStream, plan: ChatPlan, model: str) -> AsyncIterator[bytes]:
    yield _sse(chunk_body(plan.generation_id, model, {"role": "assistant", "content": ""}, None))
    # aclosing: a client that disconnects closes this generator, and with it the model's stream
    # (which stops the model and records the turn), at once rather than whenever it is collected.
    async with aclosing(stream.pieces()) as pieces:
        async for piece in pieces:
            yield _sse(chunk_body(plan.generation_id, model, {"content": piece}, None))
    finish = stream.generated.finish_reason if stream.generated else "stop"
    yield _sse(chunk_body(plan.generation_id, model, {}, finish))
    yield b"data: [DONE]\n\n"
