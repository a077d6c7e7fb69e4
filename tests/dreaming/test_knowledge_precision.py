"""Offline knowledge: complete clauses only, first person resolved, vague frames dropped; relative time dated."""

from __future__ import annotations

import pytest

from elephantasm.domain.dreaming import distil_offline
from elephantasm.domain.dreaming.patterns import extract_facts, in_third_person
from elephantasm.domain.dreaming.wellformed import malformation
from tests.dreaming.factories import ev


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("Maya likes how some of the.", "dangling"),
        ("Maya likes it.", "dangling"),
        ("Maya likes that needs my.", "dangling"),
        ("Maya plans to sell my drawings.", "person"),
        ("Maya plans to keep you updated.", "person"),
        ("Maya plans to a festival.", "verbless plan"),
        ("Maya plans to be fine.", "vague"),
        ("Maya plans to keep going.", "dangling"),
        ("Maya plans to keep busy.", "vague"),
        ("Maya went to a few days.", "time span"),
        ("Maya likes stuff.", "vague"),
        ("just some words", "no frame"),
    ],
)
def test_malformed_lines_are_named_by_their_reason(line: str, reason: str) -> None:
    assert malformation(line) == reason


@pytest.mark.parametrize(
    "line",
    [
        "Maya likes green tea.",
        "Maya plans to go to a festival.",
        "Maya plans to sell their drawings at the market.",
        "User's boss is named Esperanza.",
        "User is allergic to peanuts.",
        "Jonas went to a pottery workshop (≈ 2025-02-24..03-02).",
        "User's half marathon is on October 17.",
    ],
)
def test_complete_statements_pass(line: str) -> None:
    assert malformation(line) is None


@pytest.mark.parametrize(
    "text",
    [
        "I love how some of the colours came out in my last sketch, Jonas.",
        "I like it, Jonas, it's cozy.",
        "I like that the shelter needs my help on weekends.",
        "I'm going to be fine, Jonas, don't worry.",
        "I'll keep you updated, Jonas!",
        "I'm going to keep going, Jonas, one step at a time.",
        "I went to a few days of silent retreat once.",
    ],
)
def test_fragments_and_vague_frames_yield_no_fact(text: str) -> None:
    assert [f.content for f in extract_facts(text, from_user=True, author="Maya")] == []


def test_first_person_is_resolved_and_going_somewhere_is_a_plan_to_go() -> None:
    def facts(text: str, author: str | None = "Maya") -> list[str]:
        return [f.content for f in extract_facts(text, from_user=True, author=author)]

    assert facts("I'm planning to sell my drawings at the market, Jonas.") == [
        "Maya plans to sell their drawings at the market."
    ]
    assert facts("I'm going to a festival with friends soon, Jonas!") == ["Maya plans to go to a festival."]
    assert facts("I will call my mom on Friday", author=None) == ["User plans to call their mom (on Friday)."]
    assert in_third_person("Maya plans to thank me.", "Maya") == "Maya plans to thank Maya."
    # A possessive points back at the subject only when the subject is the speaker.
    assert in_third_person("Maya's sister likes my cooking.", "Maya") == "Maya's sister likes Maya's cooking."
    assert in_third_person("Maya lent Jonas a book of mine.", "Maya") == "Maya lent Jonas a book of theirs."
    assert facts("honestly I like variety ngl", author=None) == ["User likes variety."]  # slang ends the value


def test_a_named_participants_facts_are_theirs_and_dated() -> None:
    # Said on Wednesday 2024-05-01 (the factories' T0), by the participant recorded as the assistant.
    events = [
        ev(0, "Hey Jonas!", author="Maya"),
        ev(1, "Last week I went to a pottery workshop with my cousin, Maya!", author="Jonas"),
    ]
    knowledge = [k.content for k in distil_offline(events).knowledge]
    assert knowledge == ["Jonas went to a pottery workshop (≈ 2024-04-22..28)."]
