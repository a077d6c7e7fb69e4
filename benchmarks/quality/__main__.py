"""``python -m benchmarks.quality``: run any dataset file in the generic format, or export the generated one.

    python -m benchmarks.quality --dataset data.json [--name quality-mydata] [--out benchmarks/RESULTS.md]
    python -m benchmarks.quality --export data.json --size full
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from benchmarks.quality.bench import SIZES, describe, run_dataset
from benchmarks.quality.dataset import load, save
from benchmarks.quality.generator import generate
from benchmarks.quality.runner import BUDGETS
from benchmarks.results import write_section

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "RESULTS.md"


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run or export."""
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python -m benchmarks.quality")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--dataset", type=Path, help="a .json/.jsonl dataset in the generic format")
    what.add_argument("--export", type=Path, help="write the generated dataset of --size here and exit")
    parser.add_argument("--size", choices=list(SIZES), default="full")
    parser.add_argument("--name", default=None, help="RESULTS.md section name (default quality-<file stem>)")
    parser.add_argument("--budgets", default=",".join(map(str, BUDGETS)), help="comma-separated token budgets")
    parser.add_argument("--preset", default=None, help="Elephantasm preset (default: the server's default)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    if args.export:
        save(generate(SIZES[args.size]), args.export)
        print(f"wrote {args.export}")
        return 0
    ds = load(args.dataset)
    budgets = [int(b) for b in args.budgets.split(",")]
    name = args.name or f"quality-{args.dataset.stem}"
    sec = run_dataset(ds, name=name, dataset_note=f"dataset: `{args.dataset.name}`: {describe(ds)}",
                      budgets=budgets, preset=args.preset)
    write_section(args.out, sec, shlex.join(["python", "-m", "benchmarks.quality", *argv]))
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
