"""Knowledge rules: normalisation, dedupe keys and merging repeated drafts.

Two knowledge items are duplicates when their normalised content hashes match; the writer
(``services.dreams.knowledge``) adds vector similarity and supersession by ``subject_key``.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import replace

from .types import KnowledgeDraft

_NON_WORD = re.compile(r"[^\w\s]+")
_SPACES = re.compile(r"\s+")
_LEADING_ARTICLE = re.compile(r"^(?:the|a|an)\s+")


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
