"""Quality-certificate arithmetic: how faithfully a restored (or pruned, or re-typed) KV state
reproduces a reference (recomputing the same, or the shorter, prefix from text)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

CERTIFICATE_VERSION = 1


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """One probe prompt: greedy tokens on both paths and per-step next-token comparisons.

    ``top1_matches`` and ``kl`` are measured step by step while both paths are fed the reference
    continuation (teacher forcing), so one early divergence does not hide later agreement.
    """

    reference_tokens: tuple[int, ...]
    candidate_tokens: tuple[int, ...]
    top1_matches: int
    steps: int
    kl: tuple[float, ...]

    @property
    def identical(self) -> bool:
        return self.reference_tokens == self.candidate_tokens

    @property
    def token_agreement(self) -> float:
        """Share of positions where the two greedy continuations agree (over the longer one)."""
        n = max(len(self.reference_tokens), len(self.candidate_tokens))
        if n == 0:
            return 1.0
        same = sum(1 for a, b in zip(self.reference_tokens, self.candidate_tokens, strict=False) if a == b)
        return same / n


def grade(identical_rate: float, top1_agreement: float, mean_kl: float) -> str:
    """A: indistinguishable; B: near-lossless; C: usable with drift; D: degraded."""
    if identical_rate == 1.0 and mean_kl < 1e-3:
        return "A"
    if top1_agreement >= 0.95 and mean_kl < 0.05:
        return "B"
    if top1_agreement >= 0.80 and mean_kl < 0.5:
        return "C"
    return "D"


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def certificate(probes: Sequence[ProbeResult], reference: str) -> dict[str, Any]:
    """The certificate for a set of probes; ``reference`` names what the candidate was compared to."""
    steps = sum(p.steps for p in probes)
    kls = [k for p in probes for k in p.kl]
    identical_rate = _mean([1.0 if p.identical else 0.0 for p in probes])
    top1 = sum(p.top1_matches for p in probes) / steps if steps else 0.0
    mean_kl = _mean(kls)
    return {
        "version": CERTIFICATE_VERSION,
        "reference": reference,
        "probes": len(probes),
        "greedy_identical": bool(probes) and identical_rate == 1.0,
        "identical_rate": round(identical_rate, 6),
        "token_agreement": round(_mean([p.token_agreement for p in probes]), 6),
        "top1_agreement": round(top1, 6),
        "mean_kl": float(f"{mean_kl:.6g}"),
        "max_kl": float(f"{max(kls, default=0.0):.6g}"),
        "grade": grade(identical_rate, top1, mean_kl) if probes else "D",
    }
