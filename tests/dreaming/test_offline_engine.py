"""The offline engine: coverage, provenance, determinism, knowledge subjects and identity."""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
import sys
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from elephantasm.domain.dreaming import (
    DistillEngine,
    EventInput,
    IdentityDraft,
    OfflineEngine,
    content_hash,
    distil_offline,
    normalise_value,
)
from tests.dreaming.factories import T0, conversation, ev

SENTENCES = [
    "I live in Paris.",
    "I moved to Berlin last week!",
    "My favourite colour is blue.",
    "My favorite color is green.",
    "I love sushi.",
    "I hate sushi.",
    "We decided to ship on Friday.",
    "What time is it?",
    "Sure, I can help 🙂",
    "To make tea, boil water and steep it for 3 minutes.",
    "My name is Ana.",
    "I work at Acme Corp.",
    "I'm going to visit Rome on June 5.",
    "Always answer in English.",
    "ok",
    "",
    "Remember the deadline is 2024-06-01.",
    "Python is a language that reads like prose.",
    "my sister is named Clara",
    "I'm allergic to peanuts.",
]

event_spec = st.tuples(
    st.lists(st.sampled_from(SENTENCES), min_size=0, max_size=3).map(" ".join),
    st.sampled_from(["message.in", "message.out", "tool.call", "tool.result", "system"]),
    st.sampled_from(["s1", "s2", None]),
    st.integers(0, 5000),  # minutes
    st.one_of(st.none(), st.floats(0, 1)),
    st.sampled_from([None, "alice", "user"]),
)


def _events(specs: list[tuple]) -> list[EventInput]:
    return [
        EventInput(
            index=i,
            id=uuid.UUID(int=(i * 7919) % 100_003 + 1),
            event_type=kind,
            content=text,
            occurred_at=T0 + timedelta(minutes=minute),
            session_id=session,
            importance_score=score,
            author=author if kind == "message.in" else None,
        )
        for i, (text, kind, session, minute, score, author) in enumerate(specs)
    ]


@settings(max_examples=80, deadline=None)
@given(st.lists(event_spec, min_size=1, max_size=50), st.randoms(use_true_random=False))
def test_every_event_is_remembered_with_exact_provenance(specs: list[tuple], rnd: random.Random) -> None:
    events = _events(specs)
    ids = {e.id for e in events}
    result = distil_offline(events)

    cited = [i for m in result.memories for i in m.event_ids]
    assert set(cited) == ids  # every event in at least one memory, nothing invented
    for m in result.memories:
        assert m.event_ids and m.summary
        assert 0.0 <= m.importance <= 1.0 and 0.0 <= m.confidence <= 1.0
        own = [e for e in events if e.id in set(m.event_ids)]
        assert m.time_start == min(e.occurred_at for e in own) and m.time_end == max(e.occurred_at for e in own)
    for k in result.knowledge:
        assert k.source_event_ids and set(k.source_event_ids) <= ids
        for index in k.source_memory_indices:
            assert set(k.source_event_ids) & set(result.memories[index].event_ids)

    shuffled = events[:]
    rnd.shuffle(shuffled)
    assert repr(distil_offline(shuffled)) == repr(result)  # same input (any order) -> same bytes


def test_same_output_across_processes_and_hash_seeds() -> None:
    script = (
        "import hashlib; from tests.dreaming.test_offline_engine import sample_result; "
        "print(hashlib.sha256(repr(sample_result()).encode()).hexdigest())"
    )
    root = Path(__file__).resolve().parents[2]
    digests = {
        subprocess.run(
            [sys.executable, "-c", script],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(root)},
        ).stdout.strip()
        for seed in ("1", "2", "3")
    }
    assert len(digests) == 1
    assert digests == {hashlib.sha256(repr(sample_result()).encode()).hexdigest()}


def sample_result():  # used by the cross-process test above
    rnd = random.Random(7)
    specs = [
        (
            " ".join(rnd.sample(SENTENCES, 2)),
            rnd.choice(["message.in", "message.out"]),
            rnd.choice(["a", "b"]),
            i * 3,
            None,
            None,
        )
        for i in range(120)
    ]
    return distil_offline(_events(specs))


def test_changed_home_and_preferences_share_subject_keys() -> None:
    events = conversation(["I live in Paris.", "Nice!", "My favorite color is blue. I love sushi.", "Noted."])
    events += conversation(
        [
            "Big news: I moved to Berlin last week.",
            "Congrats!",
            "My favourite colour is green now. I hate sushi.",
            "Noted.",
        ],
        start=10,
    )
    knowledge = distil_offline(events).knowledge
    by_key: dict[str, list] = {}
    for k in knowledge:
        by_key.setdefault(k.subject_key, []).append(k)

    for key, old_value, new_value in (
        ("user.home_city", "Paris", "Berlin"),
        ("user.favorite_color", "blue", "green"),
        ("user.opinion.sushi", "likes", "dislikes"),
    ):
        old, new = by_key[key]
        assert (old.value, new.value) == (old_value, new_value)
        # same subject, different normalised value: the writer supersedes the older
        assert old.subject_key == new.subject_key and normalise_value(old.value) != normalise_value(new.value)
        assert old.source_event_ids[0] < new.source_event_ids[0]  # order kept: the writer supersedes the older


def test_restated_fact_is_one_item_with_union_of_sources() -> None:
    events = conversation(["I live in Paris.", "ok", "As I said, I live in Paris.", "ok"])
    homes = [k for k in distil_offline(events).knowledge if k.subject_key == "user.home_city"]
    assert len(homes) == 1
    assert homes[0].source_event_ids == (events[0].id, events[2].id)
    assert content_hash(homes[0].content) == content_hash("user lives in paris")


def test_named_authors_get_their_own_subjects() -> None:
    events = [ev(0, "I live in Oslo.", author="Bob"), ev(2, "I live in Rome.", author="Carla")]
    keys = {k.subject_key for k in distil_offline(events).knowledge}
    assert keys == {"user.bob.home_city", "user.carla.home_city"}


def test_summary_says_who_said_what_and_importance_follows_signals() -> None:
    dull = distil_offline(conversation(["ok", "ok"])).memories[0]
    rich = distil_offline(
        conversation(
            ["We decided to launch on May 3rd; remember it is important.", "Got it, I will remind you on Friday."]
        )
    ).memories[0]
    assert rich.summary.startswith("User: We decided") and "Assistant:" in rich.summary
    assert rich.importance > dull.importance
    explicit = distil_offline([ev(0, "ok", importance_score=1.0), ev(1, "ok")]).memories[0]
    assert explicit.importance > dull.importance


def test_identity_from_observed_style_evolves_by_version() -> None:
    casual = conversation(["hi", "hey! yeah sure, gonna do it 🙂 cool?"] * 50)
    first = distil_offline(casual).identity
    assert first is not None and first.reason and "casual" in (first.communication_style or "")
    assert first.self["style_stats"]["messages"] == 50
    # the same style again is no new version; a clearly different one is, with its reason
    assert distil_offline(conversation(["hi", "hey! yeah sure 🙂 cool?"]), first).identity is None
    formal = conversation(["hello", "Certainly. However, please note the following: " + "details " * 120] * 60)
    second = distil_offline(formal, first).identity
    assert second is not None and second.communication_style != first.communication_style
    assert "changed" in (second.reason or "")
    assert second.self["style_stats"]["messages"] == 110


def test_no_style_or_personality_without_evidence() -> None:
    # Two cheerful replies are no personality: the counters are kept, nothing is described yet.
    few = distil_offline(conversation(["hi", "Wow, great! Happy to help!"] * 2)).identity
    assert few is not None and few.self["style_stats"]["messages"] == 2
    assert (few.personality_type, few.communication_style, few.prose) == (None, None, None)
    # Plenty of messages in a neutral voice: nothing that sets the anima apart, so still nothing.
    neutral = "The report covers the quarterly numbers for the northern region and the figures look stable."
    plain = distil_offline(conversation(["hi", neutral] * 60)).identity
    assert plain is not None and (plain.personality_type, plain.communication_style) == (None, None)
    # The user's messages never make a style: only the anima's own count.
    users_only = distil_offline([ev(i, "Wow!!! amazing 🙂", inbound=True) for i in range(80)]).identity
    assert users_only is None


async def test_offline_engine_implements_the_protocol_and_covers_every_event() -> None:
    # Throughput is measured by `python -m benchmarks dreamer`, not asserted here (timed asserts flake on CI).
    engine = OfflineEngine()
    assert isinstance(engine, DistillEngine) and engine.name == "offline"
    rnd = random.Random(3)
    events = [ev(i, " ".join(rnd.sample(SENTENCES, 3)), session=f"s{i // 50}", minutes=i / 2) for i in range(3000)]
    result = await engine.distil(events, IdentityDraft(personality_type=None, communication_style=None))
    assert {i for m in result.memories for i in m.event_ids} == {e.id for e in events}


@pytest.mark.parametrize("text", ["", "   ", "\n\n"])
def test_events_without_text_still_get_a_memory(text: str) -> None:
    result = distil_offline([ev(0, text)])
    assert len(result.memories) == 1 and result.memories[0].summary


def test_identity_names_a_conversation_topic_only_on_repeated_evidence() -> None:
    def prose(events: list[EventInput]) -> str:
        identity = distil_offline(events).identity
        assert identity is not None and identity.prose
        return identity.prose

    chat = conversation(["hi", "hey! yeah sure, gonna do it 🙂 cool?"] * 50)
    once = [*chat, ev(100, "I'm allergic to peanuts.")]
    assert "casual" in prose(once) and "touch on" not in prose(once)  # one fact is no "often"
    thrice = [*once, ev(102, "I'm allergic to cats."), ev(104, "I'm allergic to dust.")]
    assert prose(thrice).endswith("Our conversations often touch on health.")
