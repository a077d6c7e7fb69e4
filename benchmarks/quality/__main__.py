"""``python -m benchmarks.quality``: run the generated dataset or any dataset file in the generic format,
or export the generated one.

    python -m benchmarks.quality --size small [--embedder hash] [--baselines-only]
    python -m benchmarks.quality --dataset data.json [--name quality-mydata] [--embedder NAME] [--out RESULTS.md]
    python -m benchmarks.quality --export data.json --size full
    python -m benchmarks.quality --size duo   # two-person chats (benchmarks/quality/duo.py)

``--embedder`` names the embedder of both the server and the dense baseline (any value
``ELEPHANTASM_EMBEDDER`` accepts); by default both use the configured one.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from benchmarks.quality.bench import SIZES, describe, duo_note, generated_note, run_dataset
from benchmarks.quality.dataset import load, save
from benchmarks.quality.dense import configured_embedder
from benchmarks.quality.duo import generate_duo
from benchmarks.quality.generator import generate
from benchmarks.quality.runner import BUDGETS
from benchmarks.results import write_section

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "RESULTS.md"


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run or export."""
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(prog="python -m benchmarks.quality")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--dataset", type=Path, help="a .json/.jsonl dataset in the generic format")
    what.add_argument("--export", type=Path, help="write the generated dataset of --size here and exit")
    parser.add_argument(
        "--size",
        choices=[*SIZES, "duo"],
        default="full",
        help="generated dataset; duo: two-person chats (benchmarks/quality/duo.py)",
    )
    parser.add_argument(
        "--name", default=None, help="RESULTS.md section name (default quality-<file stem>, or quality when generated)"
    )
    parser.add_argument("--budgets", default=",".join(map(str, BUDGETS)), help="comma-separated token budgets")
    parser.add_argument("--preset", default=None, help="Elephantasm preset (default: the server's default)")
    parser.add_argument(
        "--embedder", default=None, help="embedder of the server and the dense baseline (default: the configured one)"
    )
    parser.add_argument(
        "--baselines-only",
        action="store_true",
        help="no server: only recent turns, BM25 and dense (seconds; e.g. to compare embedders)",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    if args.export:
        save(generate_duo() if args.size == "duo" else generate(SIZES[args.size]), args.export)
        print(f"wrote {args.export}")
        return 0
    budgets = [int(b) for b in args.budgets.split(",")]
    if args.embedder:
        try:
            configured_embedder(args.embedder)
        except ValueError as exc:  # an unknown name: say so before a server starts
            parser.error(str(exc))
    if args.dataset:
        ds = load(args.dataset)
        name, note = args.name or f"quality-{args.dataset.stem}", f"dataset: `{args.dataset.name}`: {describe(ds)}"
    elif args.size == "duo":
        ds = generate_duo()
        name, note = args.name or "quality-duo", duo_note(ds)
    else:
        ds = generate(SIZES[args.size])
        name, note = args.name or "quality", generated_note(args.size, ds)
    sec = run_dataset(
        ds,
        name=name,
        dataset_note=note,
        budgets=budgets,
        preset=args.preset,
        embedder=args.embedder,
        baselines_only=args.baselines_only,
    )
    write_section(args.out, sec, shlex.join(["python", "-m", "benchmarks.quality", *argv]))
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
