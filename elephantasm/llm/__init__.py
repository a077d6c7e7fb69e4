"""LLM-facing adapters: embedders (and, elsewhere, the distiller clients)."""

from elephantasm.llm.embedders import (
    OPENAI_MAX_BATCH,
    CachedEmbedder,
    Embedder,
    EmbeddingError,
    EmbeddingSpace,
    HashEmbedder,
    OpenAIEmbedder,
    l2_normalise,
)

__all__ = [
    "OPENAI_MAX_BATCH",
    "CachedEmbedder",
    "Embedder",
    "EmbeddingError",
    "EmbeddingSpace",
    "HashEmbedder",
    "OpenAIEmbedder",
    "l2_normalise",
]
