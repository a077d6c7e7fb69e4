"""Quality benchmark: evidence recall (ER_any / ER_all) and stale rate of memory packs vs raw-turn baselines.

See ``benchmarks/quality/README.md`` for the dataset format and the metrics.
"""

from benchmarks.quality.bench import SIZES, TITLE, run, run_dataset

__all__ = ["SIZES", "TITLE", "run", "run_dataset"]
