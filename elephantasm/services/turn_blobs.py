"""Embed memories' fact-bearing turns into their compact blobs (``domain.turn_vectors``) in one call."""

from __future__ import annotations

from collections.abc import Sequence

from elephantasm.domain import turn_vectors
from elephantasm.llm.embedders import Embedder


def encode_turns(
    vectors: Sequence[Sequence[float]], turns: Sequence[Sequence[tuple[str, str | None]]], dim: int
) -> list[bytes | None]:
    """One blob per memory from ``vectors`` (every memory's turns, in order, flattened), each turn
    with its line (format 2)."""
    blobs: list[bytes | None] = []
    at = 0
    for ts in turns:
        blobs.append(turn_vectors.encode(vectors[at : at + len(ts)], dim, lines=[line for _, line in ts]))
        at += len(ts)
    return blobs


async def embed_turns(embedder: Embedder, turns: Sequence[Sequence[tuple[str, str | None]]]) -> list[bytes | None]:
    """One blob per memory (None for a memory without fact-bearing turns)."""
    texts = [t for ts in turns for t, _ in ts]
    vectors = await embedder.embed(texts) if texts else []
    return encode_turns(vectors, turns, embedder.space.dim)
