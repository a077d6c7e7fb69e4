"""The four factors of a stored memory as the pack scorer sees them now (no query).

Maps a memory row onto the domain scorer exactly as pack candidates are mapped
(``services/packs/candidates.py``): recency from when it happened (``time_end``, else
``time_start``), decay from the last recall, else creation.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from elephantasm.domain.presets import PackConfig
from elephantasm.domain.scoring import ScoredCandidate, score_candidate


def memory_factors(row: Any, config: PackConfig, as_of: datetime) -> ScoredCandidate:
    """Importance, confidence, recency and decay of a memory row at ``as_of``, and the no-query score."""
    return score_candidate(
        as_of=as_of,
        weights=config.weights,
        recency_half_life_seconds=config.recency_half_life_seconds,
        decay_half_life_seconds=config.decay_half_life_seconds,
        decay_growth=config.decay_growth,
        importance=row.importance,
        confidence=row.confidence,
        happened_at=row.time_end or row.time_start,
        last_recalled_at=row.last_recalled_at,
        created_at=row.created_at,
        recall_count=row.recall_count or 0,
    )
