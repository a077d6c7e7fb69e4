"""Distillation engines: events -> memories, knowledge and identity; plus curation rules."""

from .batching import BatchLimits, batch_groups, render_event
from .curation import (
    CurationThresholds,
    MemoryStats,
    MergeCandidate,
    MergeGroup,
    Transition,
    memory_decay,
    next_state,
    plan_merges,
    plan_transitions,
)
from .engine import DistillEngine, OfflineEngine
from .grouping import GroupingConfig, approx_tokens, event_order, group_events
from .knowledge_rules import (
    content_hash,
    cosine_similarity,
    dedupe_drafts,
    find_duplicate,
    is_contradiction,
    is_near_duplicate,
    normalise_text,
    normalise_value,
)
from .offline import distil_offline, memory_from_group
from .types import (
    KNOWLEDGE_TYPES,
    DistillError,
    DistillResult,
    EventInput,
    IdentityDraft,
    KnowledgeDraft,
    MemoryDraft,
    Usage,
)

__all__ = [
    "KNOWLEDGE_TYPES",
    "BatchLimits",
    "CurationThresholds",
    "DistillEngine",
    "DistillError",
    "DistillResult",
    "EventInput",
    "GroupingConfig",
    "IdentityDraft",
    "KnowledgeDraft",
    "MemoryDraft",
    "MemoryStats",
    "MergeCandidate",
    "MergeGroup",
    "OfflineEngine",
    "Transition",
    "Usage",
    "approx_tokens",
    "batch_groups",
    "content_hash",
    "cosine_similarity",
    "dedupe_drafts",
    "distil_offline",
    "event_order",
    "find_duplicate",
    "group_events",
    "is_contradiction",
    "is_near_duplicate",
    "memory_decay",
    "memory_from_group",
    "next_state",
    "normalise_text",
    "normalise_value",
    "plan_merges",
    "plan_transitions",
    "render_event",
]
