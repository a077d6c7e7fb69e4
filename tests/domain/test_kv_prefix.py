"""Pure pieces of KV prefix reuse: block hashes and the prefix index, prefix-stable chat pack
order, prompt batching, the in-memory state cache (no model needed)."""

from __future__ import annotations

import random
import uuid

from hypothesis import given
from hypothesis import strategies as st

from elephantasm.domain.kv.prefix_index import BLOCK, PrefixIndex, block_hashes, common_prefix
from elephantasm.domain.kv.stable import oldest_first
from elephantasm.domain.render import Layer, PackItem
from elephantasm.ids import new_batch
from elephantasm.local.engine import batches
from elephantasm.local.states import HeldState, StateCache
from tests.domain.rendering import render_pack


def test_block_hashes_name_whole_prefixes() -> None:
    a = list(range(300))
    b = a[:150] + [9999] + a[151:]
    ha, hb = block_hashes(a, "m"), block_hashes(b, "m")
    assert len(ha) == 300 // BLOCK
    assert ha[:2] == hb[:2] and ha[2] != hb[2], "block 2 holds position 150"
    assert ha[3] != hb[3], "a later block differs too: each hash covers everything before it"
    assert block_hashes(a, "another model")[0] != ha[0]


def test_index_finds_the_deepest_shared_block() -> None:
    prompt = list(range(1000))
    short = prompt[:200]  # 3 full blocks of the prompt
    longer = prompt[:700] + [1, 2, 3]  # 10 full blocks
    other = [5] * 900
    index = PrefixIndex()
    for name, tokens in (("short", short), ("longer", longer), ("other", other)):
        index.add(name, block_hashes(tokens, "m"))
    assert index.longest(block_hashes(prompt, "m")) == ("longer", 10)
    assert index.longest(block_hashes([7] * 500, "m")) == (None, 0)
    assert index.longest(block_hashes(prompt[:130], "m")) == ("short", 2), "the first added wins a tie"


@given(st.lists(st.integers(0, 5), max_size=40), st.lists(st.integers(0, 5), max_size=40))
def test_common_prefix_matches_the_definition(a: list[int], b: list[int]) -> None:
    n = common_prefix(a, b)
    assert a[:n] == b[:n]
    assert n == min(len(a), len(b)) or a[n] != b[n]


@given(st.integers(0, 3000), st.integers(16, 600))
def test_batches_cover_in_order_and_are_never_short(n: int, size: int) -> None:
    pieces = batches(n, size, 8)
    assert [i for p in pieces for i in p] == list(range(n))
    assert all(len(p) <= size for p in pieces)
    if n >= 8:
        assert all(len(p) >= 8 for p in pieces)


def _item(i: int, ids: list[uuid.UUID], score: float) -> PackItem:
    return PackItem(id=str(ids[i]), text=f"memory number {i}", score=score)


def test_oldest_first_keeps_lines_and_moves_changes_to_the_tail() -> None:
    ids = new_batch(12)
    rng = random.Random(7)
    day1 = [_item(i, ids, rng.random()) for i in range(10)]
    day2 = [_item(i, ids, rng.random()) for i in range(10)] + [_item(10, ids, 0.99), _item(11, ids, 0.98)]

    def chat_text(items: list[PackItem]) -> str:
        ranked = render_pack({Layer.LONG_TERM: items})
        order = [it.id for it in sorted(items, key=lambda it: -it.score)]
        return oldest_first(ranked, {Layer.LONG_TERM: order})

    ranked1, stable1, stable2 = render_pack({Layer.LONG_TERM: day1}), chat_text(day1), chat_text(day2)
    assert sorted(stable1.splitlines()) == sorted(ranked1.splitlines()), "same lines, another order"
    assert stable1.splitlines()[1:] == [f"- memory number {i}" for i in range(10)]
    assert stable2.startswith(stable1), "new memories come after the old ones, whatever their scores"
    assert not render_pack({Layer.LONG_TERM: day2}).startswith(ranked1)


def test_oldest_first_puts_identity_last_and_leaves_a_block_it_cannot_pair() -> None:
    text = "## Identity\n- I am Ada\n\n## Knowledge\n- b fact\n- a fact"
    ordered = oldest_first(text, {Layer.KNOWLEDGE: ["2", "1"]})
    assert ordered == "## Knowledge\n- a fact\n- b fact\n\n## Identity\n- I am Ada"
    unpaired = oldest_first(text, {Layer.KNOWLEDGE: ["only one id"]})
    assert unpaired == "## Knowledge\n- b fact\n- a fact\n\n## Identity\n- I am Ada"


def test_state_cache_budget_lru_and_owners() -> None:
    cache = StateCache(budget_bytes=250)
    a = HeldState("org-a", [1, 2, 3, 4], b"x" * 100)
    b = HeldState("org-a", [1, 2, 9], b"y" * 100)
    c = HeldState("org-b", [1, 2, 3, 4, 5], b"z" * 100)
    cache.put(a)
    cache.put(b)
    assert cache.best("org-a", [1, 2, 3, 4, 7]) == (a, 4)
    assert cache.best("org-b", [1, 2, 3]) == (None, 0), "never another owner's state"
    cache.put(c)
    assert len(cache) == 2 and cache.bytes == 200, "the least recently used went"
    assert cache.best("org-a", [1, 2, 3, 4]) == (b, 2)
    cache.take(b)
    assert cache.best("org-a", [1, 2]) == (None, 0)
    assert cache.drop_owner("org-b") == 1 and cache.bytes == 0
    cache.put(HeldState("org-a", [1], b"w" * 300))
    assert len(cache) == 0, "a state larger than the whole budget is not kept"
