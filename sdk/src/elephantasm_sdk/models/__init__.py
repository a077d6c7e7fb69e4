"""Pydantic models of the wire contract. Response models keep unknown fields."""

from .anima_event import VALID_EVENT_TYPES, Anima, AnimaCreate, Event, EventCreate
from .common import DreamStatus, EventType, KnowledgeType, MemoryState, SDKModel
from .curated import ApiKey, DreamRun, Identity, IdentityVersion, Knowledge, Memory
from .pack import (
    IdentityContext,
    MemoryPack,
    PackContent,
    ScoreBreakdown,
    ScoredKnowledge,
    ScoredMemory,
    TemporalContext,
)

__all__ = [
    "VALID_EVENT_TYPES",
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
    "SDKModel",
    "ScoreBreakdown",
    "ScoredKnowledge",
    "ScoredMemory",
    "TemporalContext",
]
