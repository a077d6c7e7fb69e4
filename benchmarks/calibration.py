"""How fast this machine's cores were while a benchmark ran: a fixed pure-Python workload, timed.

Benchmark figures are milliseconds on whatever machine ran them, and the machines here are VMs
whose host is shared: the same tree measured 2.5-3x slower on one day than on another (the
``compile-cpu`` benchmark, and a plain Python loop, on 2026-11-27 against the runs of 2026-11-25),
with nothing else running inside the VM. CPU model and core count cannot show that. So each
section records the time of one fixed workload (the *probe*), on one core and on every core at
once, measured before and after the benchmark: figures from two runs compare only as far as
their probes agree, and the all-cores factor says how much parallel work (two Postgres backends,
the API and the load generator) could really overlap.

The probe is interpreter work (integer arithmetic, a dict, a string join), the kind of work a
pack compile does in the API process; it does not measure Postgres's I/O.
"""

from __future__ import annotations

import os
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

PROBE_ROUNDS = 200_000
"""Iterations of the probe's loop: ~60-150 ms of one core on the machines seen here."""


def probe(rounds: int = PROBE_ROUNDS) -> float:
    """Seconds this process takes for the fixed workload (one core)."""
    started = time.perf_counter()
    table: dict[int, int] = {}
    total = 0
    for i in range(rounds):
        total += (i * 7) % 13
        table[i & 1023] = total
        if i % 4096 == 0:
            "".join(str(v) for v in list(table.values())[:32])
    return time.perf_counter() - started


@dataclass(frozen=True)
class Speed:
    """The probe's median time alone and with every core running it at once."""

    one_core_ms: float
    all_cores_ms: float
    cores: int

    @property
    def parallel_factor(self) -> float:
        """How much slower each core ran the probe when all ran it: 1.0 means the cores are really
        independent; ``cores`` means they were one core shared."""
        return self.all_cores_ms / self.one_core_ms

    def describe(self) -> str:
        """One line for a results section's machine entry."""
        return (
            f"{self.one_core_ms:.0f} ms one core, {self.all_cores_ms:.0f} ms on each of {self.cores} at once "
            f"(×{self.parallel_factor:.2f})"
        )


def measure(rounds: int = PROBE_ROUNDS, repeats: int = 5, cores: int | None = None) -> Speed:
    """The probe's median over ``repeats`` runs alone, then over ``repeats`` runs on ``cores``
    processes at once (default: every logical core)."""
    cores = cores or os.cpu_count() or 1
    alone = statistics.median(probe(rounds) for _ in range(repeats))
    with ProcessPoolExecutor(max_workers=cores) as pool:
        list(pool.map(probe, [rounds // 10] * cores))  # start the workers before timing
        together = [t for _ in range(repeats) for t in pool.map(probe, [rounds] * cores)]
    return Speed(1000 * alone, 1000 * statistics.median(together), cores)


def summary(before: Speed, after: Speed) -> str:
    """The machine entry for a section: the probe before and after the benchmark ran."""
    return f"before {before.describe()}; after {after.describe()}"
