"""Knowledge rules: normalisation, dedupe keys, contradiction and similarity.

Two knowledge items are duplicates when their normalised content hashes match (or their vectors
are nearly identical); they contradict when they talk about the same ``subject_key`` with a
different normalised value ("lives in Paris" then "moved to Berlin", both ``user.home_city``).
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from .types import KnowledgeDraft

_NON_WORD = re.compile(r"[^\w\s]+")
_SPACES = re.compile(r"\s+")
_LEADING_ARTICLE = re.compile(r"^(?:the|a|an)\s+")


class KnowledgeLike(Protocol):
    """Anything with a subject and content: a draft, or a stored knowledge row."""

    subject_key: str | None
    content: str


def normalise_text(text: str) -> str:
    """Casefolded, accent-stable, punctuation-free, single-spaced text."""
    text = unicodedata.normalize("NFKC", text).casefold()
    # Apostrophes join words ("don't" -> "dont") so that they do not split tokens differently.
    text = text.replace("'", "").replace("\u2019", "")
    text = _NON_WORD.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


def normalise_value(value: str) -> str:
    """A value as compared for contradictions: normalised text without a leading article."""
    return _LEADING_ARTICLE.sub("", normalise_text(value))


def content_hash(content: str) -> str:
    """The dedupe key of a knowledge item: sha256 (hex) of its normalised content."""
    return hashlib.sha256(normalise_text(content).encode("utf-8")).hexdigest()


def value_of(item: Any) -> str:
    """The normalised value of a draft or row: ``value``, else ``meta['value']``, else content."""
    value = getattr(item, "value", None)
    if value is None:
        meta = getattr(item, "meta", None)
        if isinstance(meta, Mapping):
            value = meta.get("value")
    return normalise_value(str(value if value is not None else item.content))


def is_contradiction(old: KnowledgeLike, new: KnowledgeLike) -> bool:
    """True when ``new`` states a different value for the same subject as ``old``."""
    if not old.subject_key or old.subject_key != new.subject_key:
        return False
    return value_of(old) != value_of(new)


def cosine_similarity(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors; 0.0 when either is all zeros or the lengths differ."""
    if len(a) != len(b):
        return 0.0
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    return dot / norm if norm else 0.0


def is_near_duplicate(a: Sequence[float], b: Sequence[float], threshold: float = 0.95) -> bool:
    """Whether two embeddings are close enough to count as the same statement."""
    return cosine_similarity(a, b) >= threshold


def find_duplicate(
    content: str,
    vector: Sequence[float] | None,
    existing: Iterable[tuple[Any, str, Sequence[float] | None]],
    threshold: float = 0.95,
) -> Any | None:
    """The id of the first existing ``(id, content_hash, vector)`` that duplicates ``content``.

    An exact hash match wins over a vector match; among vector matches the most similar wins
    (ties keep input order), so the answer does not depend on float noise between candidates.
    """
    key = content_hash(content)
    best_id, best_sim = None, threshold
    for item_id, item_hash, item_vector in existing:
        if item_hash == key:
            return item_id
        if vector is not None and item_vector is not None:
            sim = cosine_similarity(vector, item_vector)
            if sim >= best_sim and (best_id is None or sim > best_sim):
                best_id, best_sim = item_id, sim
    return best_id


def dedupe_drafts(drafts: Iterable[KnowledgeDraft]) -> list[KnowledgeDraft]:
    """Merge drafts with the same content hash, keeping first-seen order and the union of sources.

    Saying the same thing again corroborates it: each repeat adds a little confidence (capped).
    """
    first: dict[str, KnowledgeDraft] = {}
    events: dict[str, dict] = {}
    memories: dict[str, dict] = {}
    best: dict[str, tuple[float, float, int]] = {}
    for draft in drafts:
        key = content_hash(draft.content)
        if key not in first:
            first[key], events[key], memories[key] = draft, {}, {}
            best[key] = (draft.confidence, draft.importance, 0)
        else:
            conf, imp, repeats = best[key]
            best[key] = (max(conf, draft.confidence), max(imp, draft.importance), repeats + 1)
        # dicts as ordered sets: linear in the number of sources, however often a fact repeats
        events[key].update(dict.fromkeys(draft.source_event_ids))
        memories[key].update(dict.fromkeys(draft.source_memory_indices))
    merged = []
    for key, draft in first.items():
        conf, imp, repeats = best[key]
        merged.append(
            replace(
                draft,
                confidence=round(min(0.95, conf + 0.05 * min(repeats, 3)), 4) if repeats else draft.confidence,
                importance=imp,
                source_event_ids=tuple(events[key]),
                source_memory_indices=tuple(memories[key]),
            )
        )
    return merged
