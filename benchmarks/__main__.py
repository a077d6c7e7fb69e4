"""``python -m benchmarks <name>|all [--size tiny|small|full] [--out benchmarks/RESULTS.md]``."""

from __future__ import annotations

import argparse
import logging
import shlex
import sys
from pathlib import Path

from benchmarks import calibration
from benchmarks.registry import BENCHMARKS, SIZES, load
from benchmarks.results import Section, write_section

DEFAULT_OUT = Path(__file__).resolve().parent / "RESULTS.md"


def build_parser() -> argparse.ArgumentParser:
    """Arguments of the benchmark runner."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description="Run Elephantasm benchmarks.")
    parser.add_argument("name", choices=[*BENCHMARKS, "all"])
    parser.add_argument("--size", choices=SIZES, default="small")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="markdown file to write/update")
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="API processes (`serve --workers N`); only benchmarks that take it (ingest)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the chosen benchmarks and write each one's section as soon as it finishes."""
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    command = shlex.join(["python", "-m", "benchmarks", *argv])
    names = list(BENCHMARKS) if args.name == "all" else [args.name]
    for name in names:
        module = load(name)
        print(f"== {name} ({args.size}): {module.TITLE}", flush=True)
        before = calibration.measure()
        result = module.run(args.size) if args.workers is None else module.run(args.size, workers=args.workers)
        probe = calibration.summary(before, calibration.measure())
        for section in result if isinstance(result, list) else [result]:
            assert isinstance(section, Section)
            # How fast the cores were (benchmarks.calibration): ms compare across runs only as far as this does.
            section.environment.setdefault("CPU probe", probe)
            write_section(args.out, section, command)
        print(f"   written to {args.out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
