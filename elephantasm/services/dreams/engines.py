"""Which distillation engine a process uses: offline by default, the LLM one when configured."""

from __future__ import annotations

from elephantasm.domain.dreaming import DistillEngine, OfflineEngine
from elephantasm.settings import Settings


def build_dream_engine(settings: Settings) -> DistillEngine:
    """``LLMEngine`` when ``ELEPHANTASM_LLM_BASE_URL`` is set, else the deterministic ``OfflineEngine``."""
    if not settings.llm_base_url:
        return OfflineEngine()
    from elephantasm.llm.client import build_client  # imported lazily: only LLM deployments need openai
    from elephantasm.llm.distiller import LLMEngine

    client = build_client(settings.llm_base_url, settings.llm_api_key, timeout=settings.llm_timeout_seconds)
    return LLMEngine(
        client, settings.llm_model, max_retries=settings.llm_max_retries, timeout=settings.llm_timeout_seconds
    )
