"""The CPU probe recorded with every benchmark section (``benchmarks.calibration``)."""

from __future__ import annotations

from benchmarks.calibration import Speed, measure, probe, summary


def test_probe_time_grows_with_its_work() -> None:
    small = min(probe(20_000) for _ in range(3))
    large = min(probe(200_000) for _ in range(3))
    assert 0 < small < large


def test_measure_runs_the_probe_alone_and_on_every_core() -> None:
    speed = measure(rounds=20_000, repeats=2, cores=2)
    assert speed.cores == 2
    assert speed.one_core_ms > 0 and speed.all_cores_ms > 0
    assert speed.parallel_factor == speed.all_cores_ms / speed.one_core_ms


def test_the_machine_entry_says_both_times_and_the_factor() -> None:
    shared = Speed(one_core_ms=40.0, all_cores_ms=66.0, cores=2)
    assert shared.parallel_factor == 1.65
    assert shared.describe() == "40 ms one core, 66 ms on each of 2 at once (×1.65)"
    assert summary(Speed(40.0, 40.0, 2), shared) == (
        "before 40 ms one core, 40 ms on each of 2 at once (×1.00); after 40 ms one core, 66 ms on each of 2 at once (×1.65)"
    )
