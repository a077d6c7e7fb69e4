"""Benchmark reports: one named section per benchmark in a markdown file, replaced in place on rerun.

Every section records the machine (CPU model, cores, RAM, Python, PostgreSQL), the date, the exact
command, a markdown table and free-form notes.
"""

from __future__ import annotations

import os
import platform
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import psutil

HEADER = (
    "# Benchmark results\n\n"
    "Written by `python -m benchmarks`; each section is replaced when its benchmark is rerun.\n"
    "Aims are recorded, never asserted.\n\n"
    "Each section is the latest run of one benchmark: its command, its machine (with a CPU probe: a fixed Python\n"
    "workload on one core and on every core at once, before and after the run; milliseconds from two runs compare only\n"
    "as far as their probes agree) and its table. How the figures got here: `docs/benchmark-history.md`.\n"
)


@dataclass
class Section:
    """What one benchmark reports."""

    name: str
    title: str
    headers: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)
    environment: dict[str, str] = field(default_factory=dict)


def cpu_model() -> str:
    """The CPU's marketing name, from /proc/cpuinfo where available."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_info() -> dict[str, str]:
    """CPU, cores, RAM, OS and Python of this machine."""
    return {
        "CPU": cpu_model(),
        "cores": f"{os.cpu_count()} logical ({psutil.cpu_count(logical=False) or '?'} physical)",
        "RAM": f"{psutil.virtual_memory().total / 2**30:.1f} GiB",
        "OS": f"{platform.system()} {platform.release()}",
        "Python": platform.python_version(),
    }


def table(headers: list[str], rows: list[list[str]]) -> str:
    """A markdown table (numbers right-aligned)."""

    def numeric(col: int) -> bool:
        return all(re.fullmatch(r"[-+]?[\d,.]+[x%]?", r[col] or "0") for r in rows) if rows else False

    align = ["---:" if numeric(i) else "---" for i in range(len(headers))]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def render(section: Section, command: str, now: datetime | None = None) -> str:
    """The section's markdown, between markers that let a rerun replace it."""
    now = now or datetime.now(UTC)
    env = machine_info() | section.environment
    parts = [
        f"<!-- section:{section.name} -->",
        f"## {section.name}: {section.title}",
        "",
        f"- date: {now:%Y-%m-%d %H:%M} UTC",
        f"- command: `{command}`",
        "- machine: " + "; ".join(f"{k} {v}" for k, v in env.items()),
        "",
        table(section.headers, section.rows),
    ]
    if section.notes:
        parts += ["", *[f"- {n}" for n in section.notes]]
    parts.append(f"<!-- /section:{section.name} -->")
    return "\n".join(parts) + "\n"


def write_section(path: Path, section: Section, command: str) -> None:
    """Create ``path`` or replace/append ``section`` in it, leaving other sections untouched."""
    block = render(section, command)
    text = path.read_text(encoding="utf-8") if path.exists() else HEADER
    pattern = re.compile(
        rf"<!-- section:{re.escape(section.name)} -->.*?<!-- /section:{re.escape(section.name)} -->\n?", re.DOTALL
    )
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + block
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
