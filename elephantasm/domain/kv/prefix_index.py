"""Token-prefix matching of KV states: which cached state shares the longest prefix with a prompt.

A prompt's token ids are cut into blocks of :data:`BLOCK` tokens and each block is hashed together
with the hash of the blocks before it (a chain, as vLLM and SGLang key their prefix caches), so
block ``j``'s hash names the whole prefix ``tokens[: (j + 1) * BLOCK]``. Two prompts share the
first ``j`` blocks exactly when their ``j``-th hashes are equal, and finding the deepest shared
block is one dict lookup per block of the new prompt, however many states are indexed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

import numpy as np

BLOCK = 64
_HEX = 32  # 128 bits of sha256 per block: a collision would only cost a recompute (the restore is checked)


def block_hashes(tokens: Sequence[int], seed: str, block: int = BLOCK) -> list[str]:
    """Chained hashes of every full ``block`` of ``tokens``; ``seed`` names what else the KV depends
    on (model, chat template, KV type) so states of two models never match."""
    ids = np.asarray(tokens, dtype="<u4")
    out: list[str] = []
    prev = hashlib.sha256(seed.encode()).hexdigest()[:_HEX]
    for j in range(len(ids) // block):
        h = hashlib.sha256(prev.encode())
        h.update(ids[j * block : (j + 1) * block].tobytes())
        prev = h.hexdigest()[:_HEX]
        out.append(prev)
    return out


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """The number of leading token ids ``a`` and ``b`` share."""
    n = min(len(a), len(b))
    if n == 0:
        return 0
    diff = np.flatnonzero(np.asarray(a[:n], dtype=np.int64) != np.asarray(b[:n], dtype=np.int64))
    return int(diff[0]) if diff.size else n


@dataclass
class PrefixIndex:
    """Cached states by the chained hashes of their blocks; :meth:`longest` finds the state sharing
    the most leading blocks with a prompt (the first added wins a tie: add the preferred first)."""

    _by_hash: dict[str, Hashable] = field(default_factory=dict)

    def add(self, ref: Hashable, blocks: Sequence[str]) -> None:
        for h in blocks:
            self._by_hash.setdefault(h, ref)

    def longest(self, blocks: Sequence[str]) -> tuple[Hashable | None, int]:
        """(state, shared blocks) of the deepest match of ``blocks``, or (None, 0)."""
        for depth in range(len(blocks), 0, -1):
            ref = self._by_hash.get(blocks[depth - 1])
            if ref is not None:
                return ref, depth
        return None, 0
