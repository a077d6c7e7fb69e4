"""Content words, for checking that a paraphrase question shares no word with its evidence.

A content word is a lowercased word that is not a stop word (the BM25 baseline's list, so "no
shared content word" means BM25 scores the evidence 0 for the question), compared after light
stemming. The comparison is deliberately stricter than the BM25 tokenizer: two words also count
as shared when one stem is a prefix of the other (≥ 4 letters: "rent"/"rental") or both start
with the same five letters ("defend"/"defense"), so a real stemmer would not find a match either.
"""

from __future__ import annotations

from benchmarks.quality.bm25 import tokenize

PREFIX = 4
SAME_START = 5


def content_words(text: str) -> frozenset[str]:
    """Stemmed content words of ``text``."""
    return frozenset(tokenize(text))


def related(a: str, b: str) -> bool:
    """Whether two stems count as the same word (equal, one a long prefix of the other, or a shared start)."""
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    if len(short) >= PREFIX and long_.startswith(short):
        return True
    return len(a) >= SAME_START and len(b) >= SAME_START and a[:SAME_START] == b[:SAME_START]


def shared_content_words(a: str, b: str) -> set[tuple[str, str]]:
    """Pairs of related content words of ``a`` and ``b`` (empty: they share no content word)."""
    return {(x, y) for x in content_words(a) for y in content_words(b) if related(x, y)}
