"""Lexical relevance with inverse document frequency (BM25), over one compile's candidates.

Postgres ``ts_rank`` has no IDF: a word in every row counts as much as a rare one. In a chat
between two people both names occur in nearly every turn and every memory ("Maya: …, Jonas!"), so
a question naming one of them matches everything equally, and the one rare word that finds the
answer ("problem") carries no extra weight. Here each query term is weighted by how rare it is
among the compile's candidates (``N`` texts, ``df`` of them containing the term):
``idf = ln(1 + (N − df + ½) / (df + ½))``, and a text scores BM25
``Σ idf · tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen))`` over the terms it contains.

The candidates are the union of the anima's top rows by the four factors, by cosine and by full
text, so their document frequencies are computed at query time and cost no stored statistics;
a term in most of them (the participants' names, first of all) weighs next to nothing, and
:func:`ubiquitous` names those terms so the caller can leave them out of the query it embeds.

Terms are lowercase words without stop words, lightly stemmed; a term matches its word and its
plain inflections ("problem": "problems", "problem's"; "adopt": "adopted", "adopting"). A text's
words are counted once per process (an LRU: the same memories come back compile after compile),
and texts the full-text index says hold no query word are not read at all. Pure.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

K1 = 1.2
B = 0.75
MAX_TERMS = 8
# A term in at least this share of the candidates (and of at least MIN_DOCS of them) is ubiquitous.
UBIQUITOUS_SHARE = 0.3
MIN_DOCS = 8
# English function words and the question words a query is made of; "user"/"assistant" are the
# speaker labels every memory carries.
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her
    here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not
    now of off on once only or other our ours ourselves out over own same she should so some such than that
    the their theirs them themselves then there these they this those through to too under until up very was
    we were what when where which while who whom why will with would you your yours yourself yourselves
    user assistant s t don didn doesn isn wasn aren weren tell know ever also
    """.split()
)
_WORD = re.compile(r"[a-z0-9]+")
_QUERY_WORD = re.compile(r"[A-Za-z0-9]+")


def _term(word: str) -> str | None:
    """A query word's term: lowercase, stemmed unless capitalised (a name: "Jonas" stays "jonas")."""
    low = word.lower()
    if low in STOP_WORDS or len(low) < 2:
        return None
    return low if word[0].isupper() else _stem(low)


def query_terms(query: str) -> tuple[str, ...]:
    """The query's distinct content terms in order (at most :data:`MAX_TERMS`), lightly stemmed."""
    out: dict[str, None] = {}
    for word in _QUERY_WORD.findall(query.replace("'s ", " ").replace("\u2019s ", " ")):
        term = _term(word)
        if term is not None:
            out.setdefault(term, None)
    return tuple(out)[:MAX_TERMS]


def _stem(word: str) -> str:
    """Plural and possessive endings off ("problems" → "problem", "races" → "race")."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


@dataclass(frozen=True, slots=True)
class Lexical:
    """One compile's lexical statistics: each candidate's BM25 score and each term's document frequency."""

    terms: tuple[str, ...]
    scores: list[float]
    df: dict[str, int]
    n: int

    def idf(self, term: str) -> float:
        """``ln(1 + (N − df + ½)/(df + ½))`` of a query term over the candidates."""
        df = self.df.get(term, 0)
        return math.log(1.0 + (self.n - df + 0.5) / (df + 0.5))

    def ubiquitous(self) -> frozenset[str]:
        """Query terms in most candidates (:data:`UBIQUITOUS_SHARE`): what matching says nothing about."""
        if self.n < MIN_DOCS:
            return frozenset()
        return frozenset(t for t in self.terms if self.df.get(t, 0) >= UBIQUITOUS_SHARE * self.n)


_PUNCTUATION = str.maketrans({c: " " for c in '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\u2019\u2018\u201c\u201d\u2026'})


@lru_cache(maxsize=16384)  # pure; a compile reads the same memories compile after compile
def word_counts(text: str) -> dict[str, int]:
    """Each lowercase word of ``text`` (possessive "'s" off) with its count."""
    return dict(Counter(text.lower().replace("'s ", " ").translate(_PUNCTUATION).split()))


def _forms(terms: Sequence[str]) -> dict[str, str]:
    """Each word form a term matches ("problem": "problems", "problem's", …) → the term."""
    out: dict[str, str] = {}
    for term in terms:
        forms = [term, term + "s", term + "es", term + "'s", term + "d", term + "ed", term + "ing"]
        if term.endswith("y"):
            forms.append(term[:-1] + "ies")
        for form in forms:
            out.setdefault(form, term)
    return out


def score(texts: Sequence[str], terms: Sequence[str], matching: Sequence[bool] | None = None) -> Lexical:
    """BM25 of every text for ``terms``, document frequencies taken over ``texts`` themselves.

    ``matching`` (optional, one flag per text): False for a text known to hold no query term (no
    full-text match), which is then not read at all; it scores 0 and adds to no document frequency.
    """
    n = len(texts)
    if not terms or not n:
        return Lexical(tuple(terms), [0.0] * n, {}, n)
    forms = _forms(terms)
    wanted = forms.keys()
    found_per_text: list[tuple[dict[str, int], int] | None] = []
    df: dict[str, int] = {}
    # Length in characters: BM25 uses only a text's length over the mean, and characters cost no reading.
    lengths = [len(text) for text in texts]
    for i, text in enumerate(texts):
        if matching is not None and not matching[i]:
            found_per_text.append(None)
            continue
        counts = word_counts(text)
        hits = wanted & counts.keys()
        if not hits:
            found_per_text.append(None)
            continue
        found: dict[str, int] = {}
        for form in hits:
            term = forms[form]
            found[term] = found.get(term, 0) + counts[form]
        for term in found:
            df[term] = df.get(term, 0) + 1
        found_per_text.append((found, lengths[i]))
    lex = Lexical(tuple(terms), [], df, n)
    idf = {t: lex.idf(t) for t in terms}
    avg = max(1.0, sum(lengths) / n)
    scores = lex.scores
    for entry in found_per_text:
        if entry is None:
            scores.append(0.0)
            continue
        found, length = entry
        norm = K1 * (1.0 - B + B * length / avg)
        scores.append(math.fsum(idf[t] * tf * (K1 + 1.0) / (tf + norm) for t, tf in found.items()))
    return lex


def masked_query(query: str, drop: frozenset[str]) -> str | None:
    """``query`` without the words whose term is in ``drop`` (e.g. the participants' names), or None
    when nothing is dropped or nothing of content would be left."""
    if not drop:
        return None
    kept, dropped = [], False
    for token in query.split():
        words = _QUERY_WORD.findall(token.replace("'s", "").replace("\u2019s", ""))
        if words and all(_term(w) in drop for w in words):
            dropped = True
            continue
        kept.append(token)
    text = " ".join(kept)
    if not dropped or not query_terms(text):
        return None
    return text
