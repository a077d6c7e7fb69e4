"""Update phrasings name the same subject as the original statement, so the newer value supersedes."""

from __future__ import annotations

import pytest

from elephantasm.domain.dreaming.patterns import extract_facts


def _keyed(text: str) -> list[tuple[str | None, str | None]]:
    return [(f.subject_key, f.value) for f in extract_facts(text, from_user=True, author=None) if f.subject_key]


@pytest.mark.parametrize(
    ("original", "update", "key", "old", "new"),
    [
        (
            "My favorite board game is Catan.",
            "I switched my go-to board game to Azul.",
            "user.favorite_board_game",
            "Catan",
            "Azul",
        ),
        (
            "My favourite drink is espresso.",
            "I've completely changed my favorite drink to matcha.",
            "user.favorite_drink",
            "espresso",
            "matcha",
        ),
        (
            "My go-to sport is squash.",
            "These days: rowing is my favorite sport now.",
            "user.favorite_sport",
            "squash",
            "rowing",
        ),
        (
            "If I had to pick just one author, it would be Italo Calvino.",
            "Stanislaw Lem is my favorite author these days.",
            "user.favorite_author",
            "Italo Calvino",
            "Stanislaw Lem",
        ),
        ("I live in Porto.", "I finally relocated to Tallinn last month.", "user.home_city", "Porto", "Tallinn"),
        ("I live in Porto.", "Big news: I just moved to Kyoto.", "user.home_city", "Porto", "Kyoto"),
        (
            "I work at Northwind Labs.",
            "I changed jobs: my new employer is Bluefin Analytics.",
            "user.employer",
            "Northwind Labs",
            "Bluefin Analytics",
        ),
        (
            "My job at Northwind Labs keeps me busy.",
            "I accepted an offer and started at Marigold Health.",
            "user.employer",
            "Northwind Labs",
            "Marigold Health",
        ),
        (
            "I've gotten really into chai lately; it's easily my go-to drink now.",
            "Funny thing, I've switched my go-to drink to kefir.",
            "user.favorite_drink",
            "chai",
            "kefir",
        ),
        ("Life here in Hobart is pretty quiet.", "I moved to Bergen last month.", "user.home_city", "Hobart", "Bergen"),
        (
            "I've been renting a small flat in Leipzig for years.",
            "I now live in Gdansk.",
            "user.home_city",
            "Leipzig",
            "Gdansk",
        ),
        (
            "I'm grabbing dinner with Keiko tonight, my landlord.",
            "Yusuf is my landlord from now on.",
            "user.landlord.name",
            "Keiko",
            "Yusuf",
        ),
        (
            "My boss Priya called me.",
            "I have a new boss now, Tomasz, so far so good.",
            "user.boss.name",
            "Priya",
            "Tomasz",
        ),
        ("My dentist's name is Ingrid.", "Mateo is my dentist from now on.", "user.dentist.name", "Ingrid", "Mateo"),
        (
            "My driving test is on March 5.",
            "The driving test was rescheduled to April 9.",
            "user.event.driving_test",
            "March 5",
            "April 9",
        ),
        (
            "I've scheduled the thesis defense for June 2.",
            "The thesis defense got moved, it is now on July 13.",
            "user.event.thesis_defense",
            "June 2",
            "July 13",
        ),
    ],
)
def test_update_has_the_original_subject_key(original: str, update: str, key: str, old: str, new: str) -> None:
    assert (key, old) in _keyed(original)
    assert (key, new) in _keyed(update)


@pytest.mark.parametrize(
    "text",
    [
        "My boss I think is on holiday.",  # no name
        "I switched trains at Leipzig.",  # no favourite thing
        "The meeting is on my mind.",  # no date
        "My company is doing a reorg again.",  # not an employer's name
        "My boss The Manager said hi.",  # not a name
    ],
)
def test_no_false_subjects(text: str) -> None:
    keys = [k for k, _ in _keyed(text)]
    assert not any(k.startswith(("user.boss", "user.favorite", "user.event", "user.employer")) for k in keys), keys


def test_hometown_phrasings() -> None:
    assert ("user.hometown", "Cuenca") in _keyed("I grew up in Cuenca, a small place.")
    assert ("user.hometown", "Cuenca") in _keyed("Back in Cuenca, where I was raised, winters were brutal.")
