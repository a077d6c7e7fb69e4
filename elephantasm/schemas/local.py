"""Wire schemas of the local-model routes: OpenAI-compatible chat completions, KV snapshots,
memory packages and generations."""

from __future__ import annotations

import time
import uuid
from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from elephantasm.schemas.common import zero_or_at_least

MIN_TEMPERATURE = 0.001
"""Below it sampling is greedy in all but name, and a subnormal temperature overflows the logits
(NaN probabilities, a garbage token)."""


class ChatMessageIn(BaseModel):
    """One message; only text content is supported."""

    model_config = ConfigDict(extra="ignore")
    role: str = Field(max_length=32)
    content: str = Field(max_length=200_000)
    name: str | None = None


class ChatCompletionRequest(BaseModel):
    """The subset of OpenAI's chat-completion request a local model honours (other fields ignored).

    ``user`` names the anima (its id) unless the ``X-Elephantasm-Anima`` header does.
    """

    model_config = ConfigDict(extra="ignore")
    model: str | None = None
    messages: list[ChatMessageIn] = Field(min_length=1, max_length=1000)
    user: str | None = Field(default=None, max_length=200)
    stream: bool = False
    temperature: Annotated[float, zero_or_at_least(MIN_TEMPERATURE, 2)] | None = Field(
        default=None, ge=0, le=2, description=f"0 (greedy) or {MIN_TEMPERATURE:g} to 2."
    )
    top_p: float | None = Field(default=None, gt=0, le=1)
    max_tokens: int | None = Field(default=None, ge=1, le=8192)
    max_completion_tokens: int | None = Field(default=None, ge=1, le=8192)
    seed: int | None = Field(default=None, ge=0, le=2**63 - 1)
    n: int | None = Field(default=None, ge=1, le=1)


def _envelope(generation_id: uuid.UUID, obj: str, model: str) -> dict[str, Any]:
    return {"id": f"chatcmpl-{generation_id}", "object": obj, "created": int(time.time()), "model": model}


def completion_body(
    generation_id: uuid.UUID, model: str, text: str, finish: str, usage: dict[str, int], fingerprint: str
) -> dict[str, Any]:
    """A ``chat.completion`` object."""
    return {
        **_envelope(generation_id, "chat.completion", model),
        "system_fingerprint": fingerprint[:16],
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish, "logprobs": None}
        ],
        "usage": usage,
    }


def chunk_body(generation_id: uuid.UUID, model: str, delta: dict[str, str], finish: str | None) -> dict[str, Any]:
    """A ``chat.completion.chunk`` object (one SSE ``data:`` line)."""
    return {
        **_envelope(generation_id, "chat.completion.chunk", model),
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
    }


class KVSnapshotRead(BaseModel):
    """A KV snapshot's metadata (the bytes are in the snapshot store)."""

    id: uuid.UUID
    anima_id: uuid.UUID
    pack_fingerprint: str
    model_digest: str
    model_name: str
    llama_cpp_version: str
    kv_type: str
    n_ctx: int
    n_tokens: int
    token_ids_hash: str
    bytes: int
    sha256: str
    source: str
    summary: str | None = None
    created_at: datetime
    last_used_at: datetime


class KVPackageImported(BaseModel):
    """What an import verified and stored."""

    snapshot: KVSnapshotRead
    manifest: dict[str, Any]
    certificate: dict[str, Any]


class GenerationRead(BaseModel):
    """A recorded local-model generation."""

    id: uuid.UUID
    anima_id: uuid.UUID
    model_digest: str
    pack_fingerprint: str | None
    kv_status: str
    seed: int
    sampling: dict[str, Any]
    prompt_hash: str
    prompt_tokens: int
    output: str
    output_tokens: int
    finish_reason: str
    created_at: datetime


class ReplayRead(BaseModel):
    """The outcome of re-running a generation from its record."""

    generation_id: uuid.UUID
    identical: bool
    prompt_identical: bool
    kv: str
    output: str
    original_output: str
