"""KV states of recent conversations kept in memory: the next turn of a conversation that another
one displaced from the engine's cache restores its state from here instead of recomputing it.

A byte budget bounds them; the least recently used goes first. Entries belong to an owner (an
org) and are only ever offered to the same owner.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from elephantasm.domain.kv.prefix_index import common_prefix


@dataclass(frozen=True, eq=False)
class HeldState:
    """One saved sequence state and the prompt tokens it holds."""

    owner: object
    tokens: list[int]
    state: bytes


class StateCache:
    """States in memory under ``budget_bytes`` (LRU); safe to call from several threads."""

    def __init__(self, budget_bytes: int) -> None:
        self.budget_bytes = budget_bytes
        self._entries: OrderedDict[int, HeldState] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @property
    def bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)

    def put(self, entry: HeldState) -> None:
        """Keep ``entry`` (dropping the least recently used ones to stay within the budget)."""
        if len(entry.state) > self.budget_bytes:
            return
        with self._lock:
            self._entries[id(entry)] = entry
            self._bytes += len(entry.state)
            while self._bytes > self.budget_bytes:
                _, old = self._entries.popitem(last=False)
                self._bytes -= len(old.state)

    def best(self, owner: object, tokens: Sequence[int]) -> tuple[HeldState | None, int]:
        """The owner's entry sharing the longest prefix with ``tokens`` and that length."""
        with self._lock:
            entries = [e for e in self._entries.values() if e.owner == owner]
        best: tuple[HeldState | None, int] = (None, 0)
        for entry in entries:
            n = common_prefix(entry.tokens, tokens)
            if n > best[1]:
                best = (entry, n)
        return best

    def take(self, entry: HeldState) -> None:
        """Remove ``entry`` (it is about to become the engine's live cache)."""
        with self._lock:
            if self._entries.pop(id(entry), None) is not None:
                self._bytes -= len(entry.state)

    def drop_owner(self, owner: object) -> int:
        """Forget every state of ``owner``; returns how many there were."""
        with self._lock:
            gone = [k for k, e in self._entries.items() if e.owner == owner]
            for k in gone:
                self._bytes -= len(self._entries.pop(k).state)
        return len(gone)
