"""The engine interface the dream service talks to, and the offline implementation of it."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from .grouping import GroupingConfig, TokenCounter, approx_tokens
from .offline import distil_offline
from .types import DistillResult, EventInput, IdentityDraft


@runtime_checkable
class DistillEngine(Protocol):
    """Turns pending events into memory, knowledge and identity drafts.

    ``name`` and ``model`` are recorded on the dream run. ``distil`` either returns a complete
    result for all ``events`` (every event cited by at least one memory) or raises
    :class:`~.types.DistillError`; it never returns a partial result.
    """

    name: str

    @property
    def model(self) -> str | None:
        """The model recorded on the run (read-only here, so an engine may narrow it to ``str``)."""
        ...

    async def distil(self, events: list[EventInput], existing_identity: IdentityDraft | None) -> DistillResult:
        """Distil ``events`` (ordered or not) given the anima's current identity."""
        ...


class OfflineEngine:
    """The deterministic, network-free engine (the default when no LLM is configured)."""

    name = "offline"
    model: str | None = None

    def __init__(self, token_counter: TokenCounter = approx_tokens, grouping: GroupingConfig | None = None) -> None:
        self._count = token_counter
        self._grouping = grouping or GroupingConfig()

    async def distil(self, events: list[EventInput], existing_identity: IdentityDraft | None) -> DistillResult:
        """Distil synchronously; pure CPU work that takes well under a millisecond per event."""
        return distil_offline(events, existing_identity, self._count, self._grouping)
