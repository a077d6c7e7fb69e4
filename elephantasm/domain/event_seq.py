"""Numbering a set of events that is already partly distilled (an import): pure, no I/O.

Pending events are those above the anima's watermark (``seq > distilled_seq``), so distilled ones
come first, in the order they were distilled (one chunk per instant stays one contiguous range),
then the pending ones in their given order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

_EARLIEST = datetime.min.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class SeqRange:
    """A distilled chunk: seqs ``first..last`` (inclusive), distilled at ``at``."""

    first: int
    last: int
    at: datetime


@dataclass(frozen=True, slots=True)
class Numbering:
    """Each event's seq (in input order), the distilled chunks, and the watermark / last seq."""

    seqs: list[int]
    chunks: list[SeqRange]
    distilled_seq: int
    event_seq: int


def number_events(distilled_at: Sequence[datetime | None]) -> Numbering:
    """Seqs for events given their ``distilled_at`` (None: pending), in input order."""
    order = sorted(range(len(distilled_at)), key=lambda i: (distilled_at[i] is None, distilled_at[i] or _EARLIEST, i))
    seqs = [0] * len(distilled_at)
    chunks: list[SeqRange] = []
    for seq, i in enumerate(order, start=1):
        seqs[i] = seq
        at = distilled_at[i]
        if at is None:
            continue
        if chunks and chunks[-1].at == at:
            chunks[-1] = SeqRange(chunks[-1].first, seq, at)
        else:
            chunks.append(SeqRange(seq, seq, at))
    distilled = chunks[-1].last if chunks else 0
    return Numbering(seqs, chunks, distilled, len(seqs))
