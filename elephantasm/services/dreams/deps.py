"""What a dream run depends on, handed to it explicitly (built at the edge by ``Runtime.dreams``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, fields
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from elephantasm.db.engine import SessionFactory
from elephantasm.domain.dreaming import CurationThresholds, DistillEngine
from elephantasm.llm.embedders import Embedder
from elephantasm.services.dreams.tasks import DreamTasks
from elephantasm.settings import Settings


@dataclass(frozen=True)
class DreamLimits:
    """The settings a dream run reads (named as in :class:`Settings`)."""

    dreamer_run_timeout_seconds: int
    dreamer_heartbeat_seconds: float
    dreamer_max_events_per_run: int
    dreamer_chunk_events: int
    dreamer_stale_seconds: float
    dreamer_retry_base_seconds: float
    dreamer_retry_max_seconds: float
    dreamer_max_failures: int
    knowledge_dedupe_similarity: float
    curation_scan_limit: int
    curation: CurationThresholds

    @classmethod
    def of(cls, s: Settings) -> DreamLimits:
        """The limits configured in ``s``."""
        named = ("half_life_days", "decaying_below", "archive_below", "reactivate_similarity", "merge_similarity")
        tunables = {name: getattr(s, f"curation_{name}") for name in (*named, "max_transitions")}
        curation = CurationThresholds(**tunables, max_merge_groups=s.curation_max_merges)
        return cls(**{f.name: getattr(s, f.name) for f in fields(cls) if f.name != "curation"}, curation=curation)


@dataclass(frozen=True)
class DreamDeps:
    """A run opens several short transactions (never one across an LLM call), so it takes session
    factories rather than a session; ``pool`` gives each run's liveness lock a connection of its own."""

    unit_of_work: SessionFactory
    read_session: SessionFactory
    pool: AsyncEngine
    clock: Callable[[], datetime]
    embedder: Embedder
    distiller: DistillEngine
    space: Callable[[], Awaitable[int]]
    """The code of the embedder's space (``services.spaces``)."""
    tasks: DreamTasks
    limits: DreamLimits
