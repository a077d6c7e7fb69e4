"""Word-level differences between two identity versions, field by field (pure)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

FIELDS = ("personality_type", "communication_style", "prose", "self")
_TOKENS = re.compile(r"\s+|[^\s]+")


@dataclass(frozen=True, slots=True)
class FieldDiff:
    """One field: whether it changed, and its text as ``(op, text)`` runs, op in same/add/del."""

    field: str
    changed: bool
    runs: list[tuple[str, str]]


def field_text(version: Any, field: str) -> str:
    """A field of a version as text (``self`` as sorted, indented JSON)."""
    value = getattr(version, field, None)
    if field == "self":
        return json.dumps(value or {}, indent=2, sort_keys=True, ensure_ascii=False)
    return value or ""


def word_diff(old: str, new: str) -> list[tuple[str, str]]:
    """``old`` → ``new`` as runs of unchanged, added and deleted words (whitespace kept)."""
    a, b = _TOKENS.findall(old), _TOKENS.findall(new)
    runs: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            runs.append(("same", "".join(a[i1:i2])))
            continue
        if i2 > i1:
            runs.append(("del", "".join(a[i1:i2])))
        if j2 > j1:
            runs.append(("add", "".join(b[j1:j2])))
    return runs


def diff_versions(old: Any, new: Any) -> list[FieldDiff]:
    """Every identity field of ``old`` against ``new``."""
    out = []
    for field in FIELDS:
        before, after = field_text(old, field), field_text(new, field)
        out.append(FieldDiff(field, before != after, word_diff(before, after)))
    return out
