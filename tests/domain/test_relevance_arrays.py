"""contextual_relevance computes a compile's candidates as arrays; it must give the very floats of
its per-candidate definition (and round_many those of Python's round), bit for bit."""

from __future__ import annotations

import math
import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from elephantasm.domain.exact_round import round_many
from elephantasm.domain.scoring import _relevance_arrays, _relevance_each, contextual_relevance


def bits(values: list[float | None]) -> list[str | None]:
    return [None if v is None else float(v).hex() for v in values]


def test_round_many_is_round_bit_for_bit_on_ties_and_their_neighbours() -> None:
    rng = random.Random(7)
    ties = [(rng.randrange(-(10**6), 10**6) + 0.5) / 1e6 for _ in range(20_000)]
    near = [math.nextafter(t, d) for t in ties for d in (-math.inf, math.inf)]
    plain = [rng.uniform(-3.0, 3.0) for _ in range(20_000)] + [
        rng.random() * 10 ** -rng.randrange(9) for _ in range(5_000)
    ]
    edge = [0.0, -0.0, -1e-9, 1e-9, 5e-7, -5e-7, 2.5e-6, 999.9999995, 1e3, -1e300, math.inf, -math.inf]
    values = ties + near + plain + edge
    assert bits(round_many(np.array(values), 6).tolist()) == bits([round(v, 6) for v in values])
    assert math.isnan(round_many(np.array([math.nan]), 6)[0])
    assert bits(round_many(np.array(plain[:500]), 9).tolist()) == bits([round(v, 9) for v in plain[:500]])


_cosine = st.one_of(st.none(), st.floats(-0.3, 1.2, allow_nan=False), st.sampled_from([0.0, -0.0, 1.0, 0.5]))
_rank = st.one_of(st.none(), st.floats(0.0, 2.0), st.sampled_from([0.0, 0.1, 1e-7]))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_cosine, _rank), min_size=1, max_size=120))
def test_arrays_give_the_per_candidate_floats(signals: list[tuple[float | None, float | None]]) -> None:
    arrays = _relevance_arrays(signals)
    assert arrays is not None
    assert bits(arrays) == bits(_relevance_each(signals))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([None, 0.61, 0.62, 0.6200001]), st.sampled_from([None, 0.02, 0.03])),
        min_size=24,
        max_size=60,
    )
)
def test_narrow_and_single_signal_sets(signals: list[tuple[float | None, float | None]]) -> None:
    # all-equal signals are dropped, narrow spreads use the minimum width, lone signals fall back
    assert bits(contextual_relevance(signals)) == bits(_relevance_each(signals))


def test_a_compile_sized_set_and_non_finite_signals() -> None:
    rng = random.Random(3)
    signals = [
        (rng.choice([None, rng.uniform(0.1, 0.6)]), rng.choice([None, None, rng.random() / 5])) for _ in range(800)
    ]
    assert bits(contextual_relevance(signals)) == bits(_relevance_each(signals))
    odd = [*signals[:30], (math.nan, 0.1), (0.4, math.inf)]
    assert _relevance_arrays(odd) is None  # NaN orders differently in Python's max: the definition decides
    assert bits(contextual_relevance(odd)[:30]) == bits(_relevance_each(odd)[:30])
