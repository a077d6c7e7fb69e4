"""Helpers for the hardening tests: raw JSON bodies and error-body checks."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

JSON = {"content-type": "application/json"}


def deep_json(depth: int) -> bytes:
    """``{"a": {"a": … {}}}`` nested ``depth`` levels, built as bytes (json.dumps would recurse)."""
    return b'{"a": ' * depth + b"{}" + b"}" * depth


def body_with(fields: dict[str, Any], raw: dict[str, bytes]) -> bytes:
    """A JSON object of ``fields`` plus fields whose values are already-encoded JSON bytes."""
    parts = [json.dumps(k).encode() + b": " + json.dumps(v).encode() for k, v in fields.items()]
    parts += [json.dumps(k).encode() + b": " + v for k, v in raw.items()]
    return b"{" + b", ".join(parts) + b"}"


def retrailed(lines: list[str]) -> str:
    """Export ``lines`` (records, no trailer) as a file, ending with the trailer an export would
    give them: an import then judges the lines themselves, not a trailer they no longer match."""
    from elephantasm.schemas.transfer import LineTally

    tally = LineTally()
    for line in lines:
        tally.add(json.loads(line)["kind"], line)
    return "".join(line.rstrip("\n") + "\n" for line in lines) + tally.trailer().model_dump_json() + "\n"


def error(r: httpx.Response, status: int) -> str:
    """Assert ``r`` is a JSON error with ``status`` and a ``detail``; the detail as text."""
    assert r.status_code == status, (r.status_code, r.text[:500])
    assert r.headers["content-type"].startswith("application/json"), r.headers
    body = r.json()
    assert body.get("detail"), body
    return json.dumps(body["detail"], ensure_ascii=False)


@contextmanager
def captured_logs() -> Iterator[list[str]]:
    """Every log line (message and formatted traceback) emitted in the block, at any level.

    A handler of our own on the root logger: the app's logging setup routes records through a
    queue handler that pytest's ``caplog`` does not see.
    """
    lines: list[str] = []
    formatter = logging.Formatter("%(name)s %(message)s")

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(formatter.format(record))

    root, handler = logging.getLogger(), Collect(logging.DEBUG)
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield lines
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
