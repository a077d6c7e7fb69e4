"""The inject benchmark's round summary: medians of per-round p50s and within-round hit ratios."""

from __future__ import annotations

from benchmarks.inject import Measured, hit_ratios, summarise
from benchmarks.loadgen import PhaseResult

HEALTH = "GET /api/health"


def _measured(n: int, label: str, round_: int, latencies: list[float]) -> Measured:
    result = PhaseResult(
        requests=len(latencies),
        elapsed_s=1.0,
        latencies_ms=sorted(latencies),
        errors=0,
        first_error="",
        client_cpu_s=0.0,
    )
    return Measured(n, label, result, 0.0, round_)


def test_summary_takes_the_median_of_round_p50s_in_first_seen_order() -> None:
    runs = [
        _measured(10, HEALTH, 0, [1.0, 1.0, 9.0]),
        _measured(10, "hit", 0, [2.0, 2.0, 2.0]),
        _measured(10, HEALTH, 1, [3.0, 3.0, 3.0]),
        _measured(10, "hit", 1, [3.0, 3.0, 3.0]),
        _measured(10, HEALTH, 2, [2.0, 2.0, 2.0]),
        _measured(10, "hit", 2, [5.0, 5.0, 5.0]),
    ]
    health, hit = summarise(runs)
    assert (health.label, hit.label) == (HEALTH, "hit")
    assert health.p50s == (1.0, 3.0, 2.0) and health.p50 == 2.0
    assert hit.p50 == 3.0 and hit.requests == 9
    # Ratios pair each hit round with the health probe of the same round, not the medians.
    assert hit_ratios(runs, 10, "hit") == [2.0, 1.0, 2.5]
