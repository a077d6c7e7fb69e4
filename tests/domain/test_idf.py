"""Lexical relevance with IDF (domain.idf): rare query words weigh, words in every candidate do not."""

from __future__ import annotations

import math

from elephantasm.domain import idf

# A two-person chat: both names in nearly every line, one line with the answer.
LINES = [
    "Maya: Thanks so much, Jonas! Talk soon, bye!",
    "Jonas: Happy for you, Maya.",
    "Maya: Haha Jonas, that's so true!",
    "Jonas: Keep me posted, Maya!",
    "Maya: The weather has been so grey lately, Jonas.",
    "Jonas: Oh wow, Maya, that's awesome!",
    "Maya: I watched a funny movie with friends, Jonas.",
    "Jonas: Maya, lately I had a problem: I hurt my wrist and had to stop climbing.",
    "Maya: Good for you, Jonas!",
    "Jonas: Totally, Maya!",
]


def test_query_terms_drop_stop_words_and_stem() -> None:
    assert idf.query_terms("What problems did Jonas have?") == ("problem", "jonas")
    assert idf.query_terms("Where is Maya's dream?") == ("maya", "dream")
    assert idf.query_terms("what is it?") == ()


def test_a_rare_word_outweighs_a_name_in_every_line() -> None:
    lex = idf.score(LINES, idf.query_terms("What problem did Jonas have?"))
    assert lex.df == {"jonas": 10, "problem": 1}
    assert lex.idf("problem") > 10 * lex.idf("jonas")
    best = max(range(len(LINES)), key=lambda i: lex.scores[i])
    assert "problem" in LINES[best]
    # Matching only the name is worth little next to the answer.
    assert max(s for i, s in enumerate(lex.scores) if i != best) < 0.2 * lex.scores[best]


def test_idf_formula_and_term_frequency_saturation() -> None:
    lex = idf.score(["apple apple apple", "apple", "pear"], ["apple"])
    assert math.isclose(lex.idf("apple"), math.log(1 + (3 - 2 + 0.5) / (2 + 0.5)))
    assert lex.scores[0] > lex.scores[1] > lex.scores[2] == 0.0
    assert lex.scores[0] < 3 * lex.scores[1]  # saturates: three mentions are not three times one


def test_prefix_matching_is_bounded() -> None:
    lex = idf.score(["two races", "a racetrack nearby"], ["race"])
    assert lex.scores[0] > 0 and lex.scores[1] == 0.0  # "races" matches, "racetrack" does not


def test_ubiquitous_terms_and_the_masked_query() -> None:
    lex = idf.score(LINES, idf.query_terms("What problem did Jonas have?"))
    assert lex.ubiquitous() == frozenset({"jonas"})
    assert idf.masked_query("What problem did Jonas have?", lex.ubiquitous()) == "What problem did have?"
    assert idf.masked_query("What is Jonas's dream?", frozenset({"jonas"})) == "What is dream?"
    # Nothing masked, or nothing of content left: no second query.
    assert idf.masked_query("What problem did Jonas have?", frozenset()) is None
    assert idf.masked_query("Who is Jonas?", frozenset({"jonas"})) is None
    # Too few candidates to tell what is ubiquitous.
    assert idf.score(LINES[:3], ["jonas"]).ubiquitous() == frozenset()


def test_no_terms_or_no_texts_score_zero() -> None:
    assert idf.score(LINES, ()).scores == [0.0] * len(LINES)
    assert idf.score([], ["maya"]).scores == []
