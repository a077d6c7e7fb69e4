"""Small-talk detection: greetings, thanks, farewells and laughter carry no fact, names addressed aside."""

from __future__ import annotations

import pytest

from elephantasm.domain.lean import lean_text
from elephantasm.domain.small_talk import is_small_talk, is_small_talk_sentence


@pytest.mark.parametrize(
    "text",
    [
        "Thanks so much, Maya! Talk soon, bye!",
        "Happy for you, Jonas.",
        "haha yes",
        "Keep me posted, Jonas!",
        "Hey Jonas, hope your week is going well!",
        "No problem at all, Maya!",
        "Okay Maya, I have to run. Talk soon!",
        "lol same here 😂",
        "I'll keep you updated, Jonas!",
        "Don't worry, Maya, I'm fine!",
        "",
    ],
)
def test_content_free_turns_are_small_talk(text: str) -> None:
    assert is_small_talk(text)


@pytest.mark.parametrize(
    "text",
    [
        "lately I had a problem: I hurt my wrist and had to stop climbing",
        "Noted, peanuts.",  # a lowercase word after a comma is content, not a name addressed
        "Thanks for the tip about Lisbon!",  # a place, not someone spoken to
        "Thanks, see you on the 12th!",  # a number is content
        "Hi Maya! I adopted a kitten yesterday.",  # one sentence of content is enough
        "Guess what, Jonas, my teacher is called Margot.",
    ],
)
def test_turns_with_content_are_not_small_talk(text: str) -> None:
    assert not is_small_talk(text)


def test_a_long_sentence_is_never_small_talk() -> None:
    assert not is_small_talk_sentence("thanks " * 15)


def test_lean_text_drops_small_talk_and_keeps_named_speakers_apart() -> None:
    line = "Maya: Thanks so much, Jonas! I hurt my wrist. Jonas: Happy for you, Maya. Maya: Bye Jonas!"
    assert lean_text(line) == "Maya: I hurt my wrist."
    assert lean_text("Jonas: Haha Maya, that's so true!") == ""
    # A doubled label reads once.
    assert lean_text("Maya: Maya: I adopted a kitten.") == "Maya: I adopted a kitten."
    # a capitalised word and a colon right after a label is what that speaker said, not a second speaker
    assert lean_text("assistant: Noted: green tea.") == "assistant: Noted: green tea."
