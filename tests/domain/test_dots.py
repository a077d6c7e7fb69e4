"""sequential_dots: numpy, yet bit-identical to the scalar loop the compile used before."""

from __future__ import annotations

from operator import mul

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from elephantasm.domain.dots import sequential_dots

_floats = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False, width=64)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 48).flatmap(
        lambda n: st.tuples(
            st.lists(_floats, min_size=n, max_size=n), st.lists(st.lists(_floats, min_size=n, max_size=n), max_size=6)
        )
    )
)
def test_equals_the_python_loop_bit_for_bit(case: tuple[list[float], list[list[float]]]) -> None:
    query, rows = case
    expected = [sum(map(mul, query, row)) for row in rows]
    got = sequential_dots(query, np.array(rows, dtype=np.float64).reshape(len(rows), len(query)))
    assert [x.hex() for x in got] == [x.hex() for x in expected]  # .hex(): 0.0 and -0.0 differ too


def test_unit_vectors_at_embedding_width() -> None:
    rng = np.random.default_rng(7)
    rows = rng.standard_normal((300, 384))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    query = rng.standard_normal(384)
    query /= np.linalg.norm(query)
    expected = [sum(map(mul, query.tolist(), row)) for row in rows.tolist()]
    assert sequential_dots(query.tolist(), rows) == expected
    assert (rows @ query).tolist() != expected  # what a BLAS dot would have changed


def test_shorter_width_wins_like_map_and_empty_is_empty() -> None:
    rows = np.array([[1.0, 2.0, 0.0], [0.5, -1.0, 0.0]])
    assert sequential_dots([1.0, 1.0], rows) == [3.0, -0.5]
    assert sequential_dots([1.0, 1.0], np.empty((0, 2))) == []
