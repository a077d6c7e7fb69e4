"""Read models for the web inspector (``/ui``): figures and links the API does not list, and the
pack composer. Everything else the inspector shows comes from the same services as the API."""

from elephantasm.db.queries.inspector import AnimaCounts, anima_counts, knowledge_of_memory, memories_of_event
from elephantasm.services.inspector.composer import Composition, LayerUse, compose, describe
from elephantasm.services.inspector.factors import memory_factors

__all__ = [
    "AnimaCounts",
    "Composition",
    "LayerUse",
    "anima_counts",
    "compose",
    "describe",
    "knowledge_of_memory",
    "memories_of_event",
    "memory_factors",
]
