"""Elephantasm SDK: long-term memory for AI agents, against a self-hosted Elephantasm server.

Drop-in for the published ``elephantasm`` 0.2.0 SDK (change the import), plus an async client,
every resource of the API, retries with backoff, and conditional (304) injects.

Quick start:
    >>> from elephantasm_sdk import inject, extract, EventType
    >>> extract(EventType.MESSAGE_IN, "Hello!", role="user")
    >>> pack = inject()
    >>> system_prompt = f"You are helpful.\\n\\n{pack.as_prompt() if pack else ''}"
"""

from ._async_client import AsyncElephantasm
from ._client import Elephantasm
from ._core.packs import PackResult
from ._core.request import SDK_VERSION as __version__
from ._core.retry import RetryPolicy
from .exceptions import (
    APIConnectionError,
    APITimeoutError,
    AuthenticationError,
    ConflictError,
    DreamTimeoutError,
    ElephantasmError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    ValidationError,
)
from .functions import create_anima, extract, inject
from .models import (
    Anima,
    AnimaCreate,
    ApiKey,
    DreamRun,
    DreamStatus,
    Event,
    EventCreate,
    EventType,
    Identity,
    IdentityContext,
    IdentityVersion,
    Knowledge,
    KnowledgeType,
    Memory,
    MemoryPack,
    MemoryState,
    PackContent,
    ScoreBreakdown,
    ScoredKnowledge,
    ScoredMemory,
    TemporalContext,
)
from .pagination import AsyncPager, Page, SyncPager

__all__ = [
    "__version__",
    # clients
    "Elephantasm",
    "AsyncElephantasm",
    "RetryPolicy",
    # functions
    "create_anima",
    "inject",
    "extract",
    # models
    "Anima",
    "AnimaCreate",
    "ApiKey",
    "DreamRun",
    "DreamStatus",
    "Event",
    "EventCreate",
    "EventType",
    "Identity",
    "IdentityContext",
    "IdentityVersion",
    "Knowledge",
    "KnowledgeType",
    "Memory",
    "MemoryPack",
    "MemoryState",
    "PackContent",
    "PackResult",
    "ScoreBreakdown",
    "ScoredKnowledge",
    "ScoredMemory",
    "TemporalContext",
    # pagination
    "AsyncPager",
    "Page",
    "SyncPager",
    # exceptions
    "ElephantasmError",
    "AuthenticationError",
    "NotFoundError",
    "ConflictError",
    "PayloadTooLargeError",
    "PermissionDeniedError",
    "ValidationError",
    "RateLimitError",
    "ServerError",
    "APIConnectionError",
    "APITimeoutError",
    "DreamTimeoutError",
]
