"""Builds the LLM-facing adapters from Settings: the embedder and the distillation engine.

Called by the composition root (``elephantasm.runtime.build_runtime``) only; everything else takes
them from the runtime.
"""

from __future__ import annotations

from elephantasm.domain.dreaming import DistillEngine, OfflineEngine
from elephantasm.llm.embedders import CachedEmbedder, Embedder, HashEmbedder, OpenAIEmbedder
from elephantasm.llm.local_embedders import MiniLMEmbedder, WordLlamaEmbedder, minilm_tokenizer_path
from elephantasm.observability.metrics import InstrumentedEmbedder
from elephantasm.settings import Settings

EMBEDDERS = ("wordllama", "minilm", "hash", "openai")


def build_embedder(settings: Settings) -> Embedder:
    """The configured embedder behind an LRU (query embeddings repeat across injects)."""
    if settings.embedder == "openai":
        from elephantasm.llm.client import build_client  # lazily: openai takes ~1 s to import

        client = build_client(
            settings.embedding_base_url or settings.llm_base_url,
            settings.embedding_api_key or settings.llm_api_key,
            settings.llm_timeout_seconds,
        )
        inner: Embedder = OpenAIEmbedder(client, settings.embedding_model, settings.embedding_dimensions)
    elif settings.embedder == "hash":
        inner = HashEmbedder()
    elif settings.embedder == "wordllama":
        inner = WordLlamaEmbedder()
    elif settings.embedder == "minilm":
        tokenizer = minilm_tokenizer_path(settings.minilm_tokenizer, settings.data_dir)
        inner = MiniLMEmbedder(tokenizer, settings.embedder_threads)
    else:
        raise ValueError(f"ELEPHANTASM_EMBEDDER must be one of {', '.join(EMBEDDERS)}, not {settings.embedder!r}")
    return CachedEmbedder(InstrumentedEmbedder(inner), max_entries=4096)


def build_dream_engine(settings: Settings) -> DistillEngine:
    """``LLMEngine`` when ``ELEPHANTASM_LLM_BASE_URL`` is set, else the deterministic ``OfflineEngine``."""
    if not settings.llm_base_url:
        return OfflineEngine()
    from elephantasm.llm.client import build_client  # imported lazily: only LLM deployments need them
    from elephantasm.llm.distiller import LLMEngine

    client = build_client(settings.llm_base_url, settings.llm_api_key, timeout=settings.llm_timeout_seconds)
    return LLMEngine(
        client, settings.llm_model, max_retries=settings.llm_max_retries, timeout=settings.llm_timeout_seconds
    )
