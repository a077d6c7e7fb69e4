"""Okapi BM25 over short texts, pure Python (no dependency, deterministic).

Tokens are lowercased words with English stop words dropped and a light suffix stripping, so
"lived" meets "live" the way Postgres full-text search stems them; idf is the non-negative
Lucene form ``ln(1 + (N - df + 0.5) / (df + 0.5))``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

_WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    "a an and are as at be been but by can did do does for from had has have he her his how i im in is it its "
    "me my of on or our she so than that the their them then there they this to was we were what when where "
    "which who whom why will with would you your user s".split()
)
_SUFFIXES = ("ingly", "edly", "ings", "ing", "ies", "ied", "ed", "es", "ly", "s")


def stem(word: str) -> str:
    """Strip one common English suffix, then a final "e" ("lived", "lives", "live" → "liv"),
    keeping at least three letters."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def tokenize(text: str) -> list[str]:
    """Stemmed content words of ``text``."""
    stems = (stem(w) for w in _WORD.findall(text.lower().replace("'", "")) if w not in STOPWORDS)
    return [s for s in stems if s not in STOPWORDS]


class BM25:
    """An index over a fixed list of documents; :meth:`scores` ranks them against a query."""

    def __init__(self, documents: Sequence[str], k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.docs = [Counter(tokenize(d)) for d in documents]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.avg_length = (sum(self.lengths) / len(self.docs)) if self.docs else 0.0
        df: Counter[str] = Counter()
        for doc in self.docs:
            df.update(doc.keys())
        n = len(self.docs)
        self.idf = {term: math.log(1 + (n - f + 0.5) / (f + 0.5)) for term, f in df.items()}

    def score(self, query_terms: Sequence[str], index: int) -> float:
        """BM25 score of document ``index`` for already-tokenized query terms."""
        doc, length = self.docs[index], self.lengths[index]
        norm = self.k1 * (1 - self.b + self.b * length / self.avg_length) if self.avg_length else self.k1
        total = 0.0
        for term in query_terms:
            tf = doc.get(term, 0)
            if tf:
                total += self.idf[term] * tf * (self.k1 + 1) / (tf + norm)
        return total

    def scores(self, query: str) -> list[float]:
        """One score per document, in document order."""
        terms = tokenize(query)
        return [self.score(terms, i) for i in range(len(self.docs))]

    def ranking(self, query: str) -> list[int]:
        """Indices of documents with a positive score, best first (ties: the later document first)."""
        scored = [(s, i) for i, s in enumerate(self.scores(query)) if s > 0]
        return [i for s, i in sorted(scored, key=lambda p: (-p[0], -p[1]))]
