"""LLM-facing adapters: embedders, the OpenAI-compatible client and the LLM distiller."""
