"""Token sampling done here (not inside llama.cpp), so a (seed, settings, logits) triple always
gives the same token: what makes a generation replayable byte for byte."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True, slots=True)
class Sampling:
    """Sampling settings of one generation; ``temperature == 0`` is greedy (argmax)."""

    seed: int = 0
    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 128

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class Sampler:
    """Draws tokens for one generation from a seeded generator."""

    def __init__(self, sampling: Sampling) -> None:
        self.sampling = sampling
        self._rng = np.random.default_rng(sampling.seed)

    def __call__(self, logits: np.ndarray) -> int:
        s = self.sampling
        if s.temperature <= 0:
            return int(np.argmax(logits))
        z = logits.astype(np.float64) / s.temperature
        z -= z.max()
        p = np.exp(z)
        p /= p.sum()
        order = np.argsort(-p, kind="stable")
        if s.top_p < 1.0:
            cum = np.cumsum(p[order])
            order = order[: int(np.searchsorted(cum, s.top_p)) + 1]
        probs = p[order] / p[order].sum()
        return int(
            order[int(np.searchsorted(np.cumsum(probs), self._rng.random(), side="right").clip(0, len(order) - 1))]
        )


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Numerically stable log-probabilities (float64)."""
    z = logits.astype(np.float64)
    z -= z.max()
    return z - np.log(np.exp(z).sum())


def kl_divergence(reference_logits: np.ndarray, candidate_logits: np.ndarray) -> float:
    """KL(reference ‖ candidate) of the next-token distributions, in nats."""
    lp, lq = log_softmax(reference_logits), log_softmax(candidate_logits)
    return float(max(0.0, (np.exp(lp) * (lp - lq)).sum()))
