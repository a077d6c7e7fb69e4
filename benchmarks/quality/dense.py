"""The dense baseline: what a plain vector memory does. Every raw turn embedded with the project's
configured embedder, ranked by cosine to the question, packed greedily under the same budget.

The embedder comes from the project's own construction (``elephantasm.llm.factory.build_embedder``
over ``Settings``), so the baseline follows whatever the server would use: ``ELEPHANTASM_EMBEDDER``
or the default, unless a name is given (``--embedder`` on the command line).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from benchmarks.quality.baselines import RankedBaseline
from benchmarks.quality.dataset import Turn
from elephantasm.llm.embedders import Embedder


def configured_embedder(name: str | None = None) -> Embedder:
    """The embedder a server started with the same environment would build (``name`` overrides it)."""
    from elephantasm.llm.factory import build_embedder
    from elephantasm.settings import Settings

    return build_embedder(Settings(embedder=name) if name else Settings())


class SyncEmbedder:
    """An async :class:`Embedder` driven from synchronous code on one private event loop (clients such
    as OpenAI's stay bound to the loop they first ran on)."""

    def __init__(self, embedder: Embedder) -> None:
        self.inner = embedder
        self.name, self.dim = embedder.name, embedder.dim
        self._loop = asyncio.new_event_loop()

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One unit vector per text."""
        return self._loop.run_until_complete(self.inner.embed(texts)) if texts else []

    def close(self) -> None:
        """Close the private loop."""
        self._loop.close()


class DenseBaseline(RankedBaseline):
    """One conversation's raw turns, embedded once, ranked by cosine to a query.

    Vectors are unit length (every project embedder L2-normalises), so cosine is a dot product.
    Ties go to the later turn, as in the BM25 baseline.
    """

    def __init__(self, turns: Sequence[Turn], embedder: SyncEmbedder) -> None:
        self.turns = list(turns)
        self.embedder = embedder
        self.vectors = embedder.embed([t.content for t in self.turns])

    def scores(self, query: str) -> list[float]:
        """Cosine of every turn to ``query``, in turn order."""
        (q,) = self.embedder.embed([query])
        return [sum(a * b for a, b in zip(q, v, strict=True)) for v in self.vectors]

    def ranked(self, query: str) -> list[Turn]:
        """Every turn, most similar first."""
        scores = self.scores(query)
        return [self.turns[i] for i in sorted(range(len(scores)), key=lambda i: (-scores[i], -i))]
