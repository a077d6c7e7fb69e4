"""Relative time resolved against when a turn was said (domain.relative_dates)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from elephantasm.domain.relative_dates import annotate, dates_in, resolve

AT = datetime(2025, 3, 5, 10, tzinfo=UTC)  # a Wednesday


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("yesterday", "2025-03-04"),
        ("Tomorrow", "2025-03-06"),
        ("the day before yesterday", "2025-03-03"),
        ("two days ago", "2025-03-03"),
        ("10 days ago", "2025-02-23"),
        ("a week ago", "2025-02-24..03-02"),
        ("last week", "2025-02-24..03-02"),
        ("this week", "2025-03-03..09"),
        ("next week", "2025-03-10..16"),
        ("last weekend", "2025-03-01..02"),
        ("next month", "2025-04"),
        ("last month", "2025-02"),
        ("3 months ago", "2024-12"),
        ("last year", "2024"),
        ("next year", "2026"),
    ],
)
def test_unambiguous_expressions_resolve(expression: str, expected: str) -> None:
    assert resolve(expression, AT) == expected


def test_spans_across_a_year_keep_full_dates() -> None:
    assert resolve("next week", datetime(2025, 12, 27, tzinfo=UTC)) == "2025-12-29..2026-01-04"
    assert resolve("last month", datetime(2025, 1, 15, tzinfo=UTC)) == "2024-12"


@pytest.mark.parametrize("text", ["a few days ago", "recently", "last Friday", "some weeks ago", "lately"])
def test_vague_expressions_are_left_alone(text: str) -> None:
    assert dates_in(text, AT) == []
    assert annotate(text, AT) == text


def test_annotate_puts_the_date_after_the_expression() -> None:
    said = "Last week I went to a pottery workshop, and yesterday I adopted a kitten."
    assert annotate(said, AT) == (
        "Last week (≈ 2025-02-24..03-02) I went to a pottery workshop, and yesterday (≈ 2025-03-04) I adopted a kitten."
    )
    assert dates_in(said, AT) == ["2025-02-24..03-02", "2025-03-04"]
