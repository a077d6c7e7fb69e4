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
        "Maya plans to go to a festival (June 5).",
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
    assert facts("I'm going to a wedding in Ghent on June 5, Jonas!") == [
        "Maya plans to go to a wedding in Ghent (June 5)."
    ]
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


def _facts(text: str, author: str | None = "Maya") -> list[str]:
    return [f.content for f in extract_facts(text, from_user=True, author=author)]


@pytest.mark.parametrize(
    "text",
    [
        # Everyday "going to"/"will" without a date is an errand or a mood, not a plan worth keeping.
        "I'm going to a festival with friends soon, Jonas!",
        "I'm gonna go to bed",
        "i'm going to the gym lol",
        "I'm going to make dinner now",
        "gonna head out, Jonas",
        "I'm going to order pizza",
        "I'll do my best",
        "I'm going to need more coffee",
        "I'll bring snacks!",
        "I'm gonna get some sleep",
        # An outing told without a time or a named place.
        "I went to see a movie",
        "I went to the store",
        # About the listener, not the speaker: the clipped remainder would misstate it.
        "I love hanging out with you, Jonas",
        "I really like your new haircut",
        # Chat idioms that open with always/never are no guideline.
        "Never mind.",
        "Never again, Jonas.",
        "Always happy to help!",
        "Always wanted to try that.",
        "Never thought I'd say this, but ok",
    ],
)
def test_chit_chat_yields_no_knowledge(text: str) -> None:
    assert _facts(text) == []


@pytest.mark.parametrize(
    ("text", "author", "expected"),
    [
        ("I'm planning to adopt a dog", "Maya", "Maya plans to adopt a dog."),
        (
            "I'm planning to sell my drawings at the market, Jonas.",
            "Maya",
            "Maya plans to sell their drawings at the market.",
        ),
        ("I'm going to run the Boston marathon on April 21", None, "User plans to run the Boston marathon (April 21)."),
        ("Next month I'm going to Lisbon for a conference, Jonas.", "Maya", "Maya plans to go to Lisbon."),
        ("I'll start my new job at Acme on Monday", None, "User plans to start their new job at Acme (on Monday)."),
        ("I went to Japan in 2019 and loved it", "Jonas", "Jonas went to Japan in 2019."),
        ("Last week I went to see a play with my cousin", "Jonas", "Jonas went to see a play."),
        (
            "ive finally scheduled the housewarming party for october 5 ngl",
            None,
            "User's housewarming party is on October 5.",
        ),
        ("the gig is on april 2, taking the day after off", None, "User's gig is on April 2."),
        ("Always answer in metric units.", None, "Always answer in metric units."),
        ("never call me before 9am", None, "Never call me before 9am."),
    ],
)
def test_real_plans_experiences_dates_and_guidelines_are_kept_whole(
    text: str, author: str | None, expected: str
) -> None:
    assert expected in _facts(text, author)


def test_the_speaker_not_the_addressee_is_the_subject_and_a_later_time_dates_the_plan() -> None:
    # Said on Wednesday 2024-05-01 (the factories' T0); Maya addresses Jonas by name in both turns.
    events = [
        ev(0, "I'm planning to sell my drawings at the market, Jonas.", author="Maya"),
        ev(1, "Haha Maya, that's so true!", author="Jonas"),
        ev(2, "Next month I'm going to Lisbon for a conference, Jonas.", author="Maya"),
        ev(3, "I'm going to a festival with friends soon, Maya!", author="Jonas"),
    ]
    knowledge = [k.content for k in distil_offline(events).knowledge]
    assert knowledge == [
        "Maya plans to sell their drawings at the market.",
        "Maya plans to go to Lisbon (≈ 2024-06).",
    ]
