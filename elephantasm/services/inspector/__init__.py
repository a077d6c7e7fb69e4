"""Read models for the web inspector (``/ui``): figures and links the API does not list, and the
pack composer. Everything else the inspector shows comes from the same services as the API."""

from elephantasm.services.inspector.composer import (
    Composition,
    LayerUse,
    compose,
    describe,
)
from elephantasm.services.inspector.factors import memory_factors
from elephantasm.services.inspector.links import knowledge_of_memory, memories_of_event
from elephantasm.services.inspector.overview import AnimaCounts, anima_counts
from elephantasm.services.inspector.sessions import active_key

__all__ = [
    "AnimaCounts",
    "Composition",
    "LayerUse",
    "active_key",
    "anima_counts",
    "compose",
    "describe",
    "knowledge_of_memory",
    "memories_of_event",
    "memory_factors",
]
