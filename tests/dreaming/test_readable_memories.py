"""Offline memories read like the chat: turn boundaries kept, speakers named as in it, small talk ranked last."""

from __future__ import annotations

from elephantasm.domain.dreaming import distil_offline
from elephantasm.domain.dreaming.offline import CONTENT_FREE_IMPORTANCE
from tests.dreaming.factories import conversation, ev


def test_turns_without_final_punctuation_keep_their_boundaries() -> None:
    memory = distil_offline(
        conversation(
            [
                "I work as a nurse at Charité hospital",
                "That must be demanding work for you",
                "My sister Anna lives in Hamburg and visits in May",
                "Hamburg is lovely in the spring, I hear",
            ]
        )
    ).memories[0]
    assert "Charité hospital." in memory.summary
    assert "Hamburg and visits in May." in memory.summary
    assert "hospital My" not in memory.summary and "hospital User" not in memory.summary


def test_speakers_are_named_as_in_the_chat_without_doubled_labels() -> None:
    events = [
        ev(0, "Maya: I started a painting course on Monday, my teacher is called Margot.", author="Maya"),
        ev(1, "Jonas: Last week I hurt my wrist climbing, so no climbing for me.", author="Jonas"),
    ]
    summary = distil_offline(events).memories[0].summary
    assert summary.startswith("Maya: I started a painting course")
    assert "Jonas: Last week (≈" in summary
    assert "Maya: Maya:" not in summary and "Jonas: Jonas:" not in summary


def test_small_talk_stays_out_of_summaries_and_ranks_last() -> None:
    chat = [
        ev(0, "Hey Jonas! How are you doing?", author="Maya", session="a"),
        ev(1, "Hi Maya, all good here, thanks. And you?", author="Jonas", session="a"),
        ev(2, "Thanks so much, Jonas! Talk soon, bye!", author="Maya", session="a"),
        ev(3, "Bye Maya, take care!", author="Jonas", session="a"),
        ev(4, "Jonas, lately I had a problem: I hurt my wrist and stopped climbing.", author="Maya", session="b"),
        ev(5, "Haha Maya, that's so true!", author="Jonas", session="b"),
    ]
    greetings, content = distil_offline(chat).memories
    # Still a memory (its events stay cited), but worth next to nothing.
    assert set(greetings.event_ids) == {e.id for e in chat[:4]}
    assert greetings.importance == CONTENT_FREE_IMPORTANCE < content.importance
    assert "problem" in content.summary and "so true" not in content.summary
