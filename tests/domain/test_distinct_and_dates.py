"""Denser packs: a line said again is served once, and dates show only when time matters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from elephantasm.domain.distinct import line_key, said_on_several_days
from elephantasm.domain.lean import wants_dates
from elephantasm.domain.pack_trace import Decision, PackTrace
from elephantasm.domain.packing import pack
from elephantasm.domain.render import Layer, PackItem, item_line
from elephantasm.tokens import TokenCounter
from tests.domain.rendering import render_pack

O200K = TokenCounter("o200k_base")
WHEN = datetime(2026, 10, 30, 9, tzinfo=UTC)


def test_restatements_share_a_key() -> None:
    assert line_key("User: Do you have tips for remembering people's names?") == line_key(
        "user: do you have tips for remembering peoples names"
    )
    # case, punctuation, short interjections, swapped and doubled letters
    assert line_key("I should call my best friend more often, honestly.") == line_key(
        "i should call my best friend more often, honetsly lol"
    )
    assert line_key("my friends and i argued about the best board game") == line_key(
        "my friends and i argueed about the best board gaame"
    )


def test_different_statements_keep_different_keys() -> None:
    assert line_key("The gig is on April 2.") != line_key("The gig is on April 5.")
    assert line_key("My favourite game is Catan.") != line_key("My favourite game is Azul.")
    assert line_key("My sister lives in Paris.") != line_key("My brother lives in Paris.")
    assert line_key("ok") != line_key("no")  # only short words: all of them count


@given(st.text(max_size=80))
def test_key_is_deterministic_and_case_blind(text: str) -> None:
    assert line_key(text) == line_key(text) == line_key(text.upper().lower())


def test_a_restatement_on_another_day_is_served_once_at_any_budget() -> None:
    lines = {
        Layer.LONG_TERM: [
            PackItem("a", "User: Do you have tips for remembering names?", score=0.9, time=WHEN),
            PackItem("b", "user: do you have tips for remembering names", score=0.8, time=WHEN + timedelta(days=3)),
            PackItem("c", "User: I text Ignatius first when something goes wrong.", score=0.7, time=WHEN),
        ]
    }
    one_line = O200K(render_pack({Layer.LONG_TERM: [lines[Layer.LONG_TERM][0], lines[Layer.LONG_TERM][2]]}))
    small = pack(lines, max_tokens=one_line + 1, count=O200K, distinct=True)
    assert [it.id for it in small.items(Layer.LONG_TERM)] == ["a", "c"]
    assert [it.id for it in pack(lines, max_tokens=one_line + 1, count=O200K).items(Layer.LONG_TERM)] == ["a", "b"]
    large = pack(lines, max_tokens=1000, count=O200K, distinct=True)
    assert [it.id for it in large.items(Layer.LONG_TERM)] == ["a", "c"]
    assert large.text.count("(2026-") == 2 and [it.id for it in large.echoes[(Layer.LONG_TERM, "a")]] == ["b"]


def test_chatter_said_on_many_days_fills_no_dated_pack() -> None:
    said = "Jonas: The race on TV yesterday was so boring, Maya."
    chatter = [PackItem(f"t{d}", said, score=0.6, time=WHEN + timedelta(days=d)) for d in range(6)]
    answer = PackItem("r", "Jonas: Two days ago I ran my first obstacle race, Maya, so proud!", score=0.9, time=WHEN)
    res = pack({Layer.LONG_TERM: [*chatter, answer]}, max_tokens=2000, count=O200K, distinct=True)
    assert res.text.count("boring") == 1 and res.text.count("obstacle") == 1
    # The newest copy is served (equal scores rank newest first) and cites the other five days.
    assert [it.id for it in res.items(Layer.LONG_TERM)] == ["r", "t5"]
    assert len(res.echoes[(Layer.LONG_TERM, "t5")]) == 5


def test_a_restatement_that_would_render_the_same_line_is_left_out_at_any_budget() -> None:
    said = "Jonas: I love how some of the colours came out in my last sketch, Maya."
    lines = {
        Layer.LONG_TERM: [
            PackItem("a", said, score=0.9, time=WHEN, dated=False),
            PackItem("b", said.lower(), score=0.8, time=WHEN + timedelta(days=3), dated=False),
            PackItem("c", said, score=0.7, time=WHEN + timedelta(days=9), dated=False),
            PackItem("d", "Maya: I love how some of the colours came out in my last sketch, Jonas.", score=0.6),
        ]
    }
    trace = PackTrace()
    res = pack(lines, max_tokens=1000, count=O200K, distinct=True, trace=trace)
    assert [it.id for it in res.items(Layer.LONG_TERM)] == ["a", "d"]  # another speaker says something else
    assert res.text.count("colours") == 2
    assert {t.item.id for t in trace.items if t.decision is Decision.DUPLICATE} == {"b", "c"}
    # The served line stands for the ones left out: their evidence can be cited with it.
    assert [it.id for it in res.echoes[(Layer.LONG_TERM, "a")]] == ["b", "c"]
    assert (Layer.LONG_TERM, "d") not in res.echoes
    # Without ``distinct`` every line is served, as before.
    assert len(pack(lines, max_tokens=1000, count=O200K).items(Layer.LONG_TERM)) == 4


def test_a_remark_is_a_habit_when_said_again_on_another_day() -> None:
    grey = "Jonas: The weather has been so grey lately, Maya, I miss the sun."
    lines = [
        (grey, WHEN),
        ("jonas: the weather has been so grey lately, maya, i miss the sun", WHEN + timedelta(days=4)),
        ("Maya: I volunteer at the animal shelter in Westhaven every Sunday.", WHEN),
        # the same turn shown by two overlapping memories is one remark, made once
        ("Jonas: I ran my first obstacle race, Maya, so proud!", WHEN),
        ("Jonas: I ran my first obstacle race, Maya, so proud!", WHEN + timedelta(hours=2)),
        ("Maya: I do not volunteer at the animal shelter in Westhaven.", WHEN + timedelta(days=9)),
        ("Undated remark.", None),
    ]
    assert said_on_several_days(lines) == [True, True, False, False, False, False, False]
    assert said_on_several_days([]) == []


def test_negations_are_not_restatements() -> None:
    assert line_key("I eat meat.") != line_key("I do not eat meat.")
    assert line_key("There is a meeting on Friday.") != line_key("There is no meeting on Friday.")


def test_structural_layers_are_never_treated_as_restatements() -> None:
    trace = PackTrace()
    items = {Layer.IDENTITY: [PackItem("n", "Name: Ada"), PackItem("s", "name: ada", score=0.5)]}
    res = pack(items, max_tokens=1000, count=O200K, distinct=True, trace=trace)
    assert [it.id for it in res.items(Layer.IDENTITY)] == ["n", "s"]
    assert all(t.decision is not Decision.DUPLICATE for t in trace.items)


def test_undated_lines_drop_the_date_but_keep_their_rank() -> None:
    dated = PackItem("m", "User: I do curling three evenings a week.", time=WHEN)
    undated = PackItem("m", dated.text, time=WHEN, dated=False)
    assert item_line(Layer.LONG_TERM, dated) == "- (2026-10-30) User: I do curling three evenings a week.\n"
    assert item_line(Layer.LONG_TERM, undated) == "- User: I do curling three evenings a week.\n"
    assert O200K(item_line(Layer.LONG_TERM, undated)) < O200K(item_line(Layer.LONG_TERM, dated))


def test_dates_are_wanted_without_a_query_or_when_time_or_order_matters() -> None:
    assert wants_dates(None)
    for query in (
        "When is the thesis defense?",
        "What is the user's favourite game now?",
        "Where does the user currently live?",
        "What happened last week?",
        "What did the user do on Monday?",
        "How many weeks has the user been training?",
        "Where was the user in October?",
    ):
        assert wants_dates(query), query
    for query in ("Who is the user's boss?", "What sport does the user play?", "What may help the user sleep?"):
        assert not wants_dates(query), query


def test_a_line_in_two_layers_is_served_once_in_the_session_citing_both() -> None:
    said = "Maya: I signed up for the pottery class on Thursdays."
    lines = {
        Layer.LONG_TERM: [
            PackItem("m", said, score=0.9, time=WHEN, dated=False, provenance=("e-old",)),
            PackItem("k", "Maya: I do not like pottery class.", score=0.5, time=WHEN, dated=False),
        ],
        Layer.SESSION: [PackItem("s", said.lower(), score=0.4, time=WHEN, dated=False, provenance=("e-now",))],
    }
    trace = PackTrace()
    res = pack(lines, max_tokens=1000, count=O200K, distinct=True, trace=trace)
    assert [it.id for it in res.items(Layer.SESSION)] == ["s"]
    assert [it.id for it in res.items(Layer.LONG_TERM)] == ["k"]  # a negation says something else
    assert res.text.lower().count("thursdays") == 1
    assert [it.id for it in res.echoes[(Layer.SESSION, "s")]] == ["m"]
    assert {t.item.id for t in trace.items if t.decision is Decision.DUPLICATE} == {"m"}


def test_the_session_copy_keeps_its_best_copys_rank_and_the_freed_budget_goes_on() -> None:
    said = "Maya: I signed up for the pottery class on Thursdays."
    lines = {
        Layer.LONG_TERM: [
            PackItem("m", said, score=0.9, time=WHEN, dated=False),
            PackItem("o", "Maya: My sister Ines is moving to Lisbon in May.", score=0.3, time=WHEN, dated=False),
            PackItem("p", "Maya: The bakery on Rua Augusta closes at six now.", score=0.2, time=WHEN, dated=False),
        ],
        Layer.SESSION: [PackItem("s", said, score=0.1, time=WHEN, dated=False)],
    }
    two = render_pack({Layer.LONG_TERM: [lines[Layer.LONG_TERM][1]], Layer.SESSION: lines[Layer.SESSION]})
    # Room for two lines, all of it in the overflow round: the session line ranks as its long-term
    # copy (0.9), not its own 0.1, and the room that copy would have used serves the next memory.
    res = pack(lines, max_tokens=O200K(two) + 3, count=O200K, shares={Layer.KNOWLEDGE: 1.0}, distinct=True)
    assert res.text == two
    assert [it.id for it in res.echoes[(Layer.SESSION, "s")]] == ["m"]


def test_the_same_words_on_different_days_are_served_once_in_the_session() -> None:
    said = "Maya: I signed up for the pottery class on Thursdays."
    lines = {
        Layer.LONG_TERM: [PackItem("m", said, time=WHEN - timedelta(days=20))],
        Layer.SESSION: [PackItem("s", said, time=WHEN)],
    }
    res = pack(lines, max_tokens=1000, count=O200K, distinct=True)
    assert res.text.count("Thursdays") == 1
    assert [it.id for it in res.echoes[(Layer.SESSION, "s")]] == ["m"]
