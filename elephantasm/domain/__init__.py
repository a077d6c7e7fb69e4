"""Pure, synchronous core: scoring, presets, packing, rendering, fingerprints, temporal context.

No I/O, no clock, no environment: every input (``as_of``, weights, token counter) is an argument.
"""

from elephantasm.domain.errors import ConflictError, DomainError, NotFoundError, ValidationError
from elephantasm.domain.fingerprint import (
    PACK_FORMAT_VERSION,
    cache_key,
    canonical_json,
    normalise_query,
    pack_fingerprint,
    pack_inputs,
    sha256_hex,
)
from elephantasm.domain.packing import PackResult, normalise_shares, pack
from elephantasm.domain.presets import (
    DEFAULT_PRESET,
    PRESET_NAMES,
    PRESETS,
    LayerLimits,
    LayerShares,
    PackConfig,
    UnknownPresetError,
    adapt_weights,
    effective_weights,
    get_preset,
    resolve_config,
)
from elephantasm.domain.render import RENDER_ORDER, Layer, PackItem, rank_key, render_pack
from elephantasm.domain.scoring import (
    InvalidScoringError,
    ScoreBreakdown,
    ScoredCandidate,
    ScoringWeights,
    decay,
    fuse_relevance,
    quantise,
    recency,
    score_candidate,
)
from elephantasm.domain.temporal import TemporalContext, humanise_duration, temporal_context

__all__ = [
    "DEFAULT_PRESET",
    "PACK_FORMAT_VERSION",
    "PRESETS",
    "PRESET_NAMES",
    "RENDER_ORDER",
    "ConflictError",
    "DomainError",
    "InvalidScoringError",
    "Layer",
    "LayerLimits",
    "LayerShares",
    "NotFoundError",
    "PackConfig",
    "PackItem",
    "PackResult",
    "ScoreBreakdown",
    "ScoredCandidate",
    "ScoringWeights",
    "TemporalContext",
    "UnknownPresetError",
    "ValidationError",
    "adapt_weights",
    "cache_key",
    "canonical_json",
    "decay",
    "effective_weights",
    "fuse_relevance",
    "get_preset",
    "humanise_duration",
    "normalise_query",
    "normalise_shares",
    "pack",
    "pack_fingerprint",
    "pack_inputs",
    "quantise",
    "rank_key",
    "recency",
    "render_pack",
    "resolve_config",
    "score_candidate",
    "sha256_hex",
    "temporal_context",
]
