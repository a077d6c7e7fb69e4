"""Distillation engines: events -> memories, knowledge and identity; plus curation rules."""

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
from .grouping import GroupingConfig, approx_tokens, group_events
from .knowledge_rules import content_hash, normalise_text, normalise_value
from .offline import OfflineEngine, distil_offline, memory_from_group
from .types import DistillEngine, DistillError, DistillResult, EventInput, IdentityDraft, KnowledgeDraft, Usage

__all__ = [
    "CurationThresholds",
    "DistillEngine",
    "DistillError",
    "DistillResult",
    "EventInput",
    "GroupingConfig",
    "IdentityDraft",
    "KnowledgeDraft",
    "MemoryStats",
    "MergeCandidate",
    "MergeGroup",
    "OfflineEngine",
    "Transition",
    "Usage",
    "approx_tokens",
    "content_hash",
    "distil_offline",
    "group_events",
    "memory_decay",
    "memory_from_group",
    "next_state",
    "normalise_text",
    "normalise_value",
    "plan_merges",
    "plan_transitions",
]
