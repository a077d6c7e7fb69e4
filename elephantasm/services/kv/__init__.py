"""Model-level memory use cases: KV snapshots of packs, chat with the local model, generations
and replay, memory packages."""
