"""``python -m benchmarks knowledge``: the offline engine's knowledge judged on the generator's chats."""

from __future__ import annotations

from benchmarks.knowledge import DUO_SIZES, judge, run
from benchmarks.quality.duo import generate_duo
from elephantasm.domain.dreaming.wellformed import malformation


def test_knowledge_checker_reports_both_datasets() -> None:
    section = run("tiny")
    assert [row[0] for row in section.rows] == ["generated (quality)", "two-person chats (duo)"]
    assert all(row[2].endswith("%") and row[4].endswith("%") for row in section.rows)


def test_two_person_facts_are_recalled_well_formed_and_cite_their_turn() -> None:
    r = judge(generate_duo(DUO_SIZES["small"]))
    examples = r["examples"]
    assert isinstance(examples, list) and examples
    assert [line for line in examples if malformation(line)] == []
    assert float(r["recall"]) > 0.2  # type: ignore[arg-type]
