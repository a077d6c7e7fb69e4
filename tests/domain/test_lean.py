"""Lean packs: no filler or repeated speaker labels, short identity without internals, shares for evidence."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from elephantasm.domain.lean import IdentityText, identity_lines, is_filler, lean_text, shorten, wants_temporal
from elephantasm.domain.packing import pack
from elephantasm.domain.presets import SESSION_SHARE_FULL_TOKENS, budget_shares, get_preset, resolve_config
from elephantasm.domain.render import Layer, PackItem
from elephantasm.tokens import TokenCounter


def test_filler_goes_and_speakers_are_labelled_once() -> None:
    text = (
        "User: I moved to Porto last week. Assistant: That sounds great. How do you like it so far? "
        "User: The flat is near the river."
    )
    assert lean_text(text) == "User: I moved to Porto last week. The flat is near the river."


def test_content_is_never_filler() -> None:
    for sentence in (
        "Noted: green tea.",
        "Noted, no peanuts.",
        "Sure, your dentist is Dr. Kwame.",
        "Okay, see you on the 5th.",
        "Got it, the meeting moved to 14:30 on Friday.",
    ):
        assert not is_filler(sentence), sentence
    for sentence in ("Noted!", "Got it, I'll remember that.", "Interesting, tell me more if you like.", "Thanks!"):
        assert is_filler(sentence), sentence


def test_a_line_of_only_filler_becomes_empty_and_is_not_packed() -> None:
    assert lean_text("assistant: Thanks, that helps. Sounds good!") == ""
    res = pack(
        {Layer.SESSION: [PackItem("a", lean_text("assistant: Noted!")), PackItem("b", "user: hi there")]},
        max_tokens=100,
        count=TokenCounter("o200k_base"),
    )
    assert [it.id for it in res.items(Layer.SESSION)] == ["b"]


def test_text_without_labels_is_kept_whole() -> None:
    assert lean_text("Switched the team from Jenkins to GitHub Actions.") == (
        "Switched the team from Jenkins to GitHub Actions."
    )


@given(st.text(max_size=300))
def test_lean_text_is_stable_and_never_longer(text) -> None:
    once = lean_text(text)
    assert lean_text(once) == once
    assert len(once) <= len(" ".join(text.split()))


def test_identity_is_at_most_three_short_lines_without_internals() -> None:
    stats = {"casual": 105, "contractions": 227}
    ident = IdentityText(
        "Ada",
        "research assistant " * 20,
        "Inquisitive Helper",
        "balanced, neutral, asks questions often",
        prose=f"I tend to write medium-length messages. {json.dumps(stats)}",
    )
    lines = identity_lines(ident, brief=False)
    assert [k for k, _ in lines] == ["name", "personality", "style"]
    assert all(len(line) <= 130 for _, line in lines)
    rendered = "\n".join(line for _, line in lines)
    assert "{" not in rendered and "casual" not in rendered and rendered.count("Ada") == 1
    assert identity_lines(ident, brief=True) == lines[:1]


def test_prose_stands_in_for_a_missing_style_only() -> None:
    lines = dict(identity_lines(IdentityText("Bo", prose="I write short notes. Often about food."), brief=False))
    assert lines == {"name": "Name: Bo", "style": "Style: I write short notes."}


def test_shorten_cuts_at_a_word() -> None:
    assert shorten("alpha beta gamma", 12) == "alpha beta…"
    assert shorten("  a  b ", 10) == "a b"


def test_temporal_line_only_for_time_questions() -> None:
    assert wants_temporal(None)
    assert wants_temporal("When did we last talk?") and wants_temporal("what happened yesterday")
    assert not wants_temporal("What is the user's favourite drink?")


def test_with_a_query_small_budgets_give_the_session_share_to_evidence() -> None:
    cfg = get_preset("conversational")
    plain = cfg.shares.as_mapping()
    assert budget_shares(cfg, 500, has_query=False) == plain
    assert budget_shares(cfg, SESSION_SHARE_FULL_TOKENS, has_query=True) == plain
    small = budget_shares(cfg, 500, has_query=True)
    assert small[Layer.SESSION] == plain[Layer.SESSION] / 4
    assert sum(small.values()) == sum(plain.values())
    assert small[Layer.LONG_TERM] > plain[Layer.LONG_TERM] and small[Layer.KNOWLEDGE] > plain[Layer.KNOWLEDGE]
    # Shares given explicitly are kept as they are.
    custom = resolve_config(None, {"shares": {"session": 0.9}})
    assert budget_shares(custom, 500, has_query=True) == custom.shares.as_mapping()
