"""The offline, deterministic distiller: no network, same input -> same output, byte for byte.

Events are grouped into exchanges (:mod:`.grouping`); each exchange becomes one memory with an
extractive "who said what" summary of its most informative sentences, an importance from explicit
scores and textual signals, and a confidence from how much of a conversation it saw. Knowledge comes
from :mod:`.patterns`, identity from :mod:`.style`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, replace

from elephantasm.domain.relative_dates import annotate, dates_in
from elephantasm.domain.small_talk import is_small_talk, is_small_talk_sentence

from .grouping import GroupingConfig, TokenCounter, approx_tokens, event_text, group_events
from .knowledge_rules import dedupe_drafts
from .patterns import Fact, extract_facts
from .style import evolve_identity
from .text import (
    clean,
    is_agent_turn,
    is_user_turn,
    own_text,
    sentence_score,
    sentences,
    shorten,
    signal_score,
    signals,
    speaker,
    speaks_for_a_person,
)
from .types import DistillResult, EventInput, IdentityDraft, KnowledgeDraft, MemoryDraft

SUMMARY_SENTENCES = 3
SUMMARY_CHARS = 320
SENTENCE_CHARS = 160
OFFLINE_META = {"engine": "offline"}
# An exchange of greetings, thanks and farewells only: kept (its events are cited) but ranked below
# any exchange with content.
CONTENT_FREE_IMPORTANCE = 0.05
_END = (".", "!", "?", "\u2026", '"', "'", ")")


def _ranked_sentences(group: Sequence[EventInput]) -> tuple[list[tuple], set[str]]:
    """Candidate sentences ``(-score, position, speaker, sentence)`` and the group's signal categories."""
    candidates: list[tuple] = []
    categories: set[str] = set()
    position = 0
    for event in group:
        who = speaker(event)
        for number, sentence in enumerate(sentences(clean(own_text(event)))):
            if is_small_talk_sentence(sentence):
                continue  # "Thanks so much, Maya!" says nothing a summary should carry
            found = signals(sentence)
            categories |= found
            sentence = annotate(sentence, event.occurred_at)  # "last week (≈ 2025-02-24..03-02)"
            # A user's opening sentence usually states what the exchange is about.
            bonus = 0.2 if number == 0 and is_user_turn(event) else 0.0
            candidates.append((-(sentence_score(sentence, found) + bonus), position, who, sentence))
            position += 1
    return candidates, categories


def extractive_summary(group: Sequence[EventInput], candidates: list[tuple]) -> str:
    """The most informative sentences, in conversation order, labelled with who said them."""
    if not candidates:
        said = [f"{speaker(e)}: {_ended(shorten(clean(own_text(e)), SENTENCE_CHARS))}" for e in group if own_text(e)]
        if said:  # small talk only: kept as it was said, ranked low (CONTENT_FREE_IMPORTANCE)
            return shorten(" ".join(said), SUMMARY_CHARS)
        kinds = ", ".join(sorted({e.event_type for e in group}))
        return f"{len(group)} event(s) without text ({kinds})"
    chosen = sorted(sorted(candidates)[:SUMMARY_SENTENCES], key=lambda c: c[1])
    parts: list[str] = []
    last_who, used = None, 0
    for _, _, who, sentence in chosen:
        text = _ended(shorten(sentence, SENTENCE_CHARS))
        piece = text if who == last_who else f"{who}: {text}"
        if parts and used + len(piece) + 1 > SUMMARY_CHARS:
            break
        parts.append(piece)
        used += len(piece) + 1
        last_who = who
    return " ".join(parts)


def _ended(sentence: str) -> str:
    """A sentence with its end marked, so joined turns keep their boundaries."""
    return sentence if sentence.endswith(_END) else sentence + "."


def is_content_free(group: Sequence[EventInput]) -> bool:
    """Whether every text of the exchange is small talk (greetings, thanks, farewells, "haha")."""
    return all(is_small_talk(clean(own_text(e))) for e in group)


def _importance(group: Sequence[EventInput], categories: set[str]) -> float:
    # Small talk carries no signal, whatever words it has ("Happy for you, Maya!" names someone).
    signal = CONTENT_FREE_IMPORTANCE if is_content_free(group) else signal_score(categories)
    explicit = [min(1.0, max(0.0, e.importance_score)) for e in group if e.importance_score is not None]
    if explicit:
        # The client's own score is the stronger evidence; text signals refine it.
        return round(0.6 * max(explicit) + 0.4 * signal, 4)
    return round(signal, 4)


def _confidence(group: Sequence[EventInput]) -> float:
    both_sides = any(is_user_turn(e) for e in group) and any(is_agent_turn(e) for e in group)
    texty = sum(1 for e in group if event_text(e).strip())
    value = 0.5 + 0.05 * min(len(group) - 1, 4) + (0.1 if both_sides else 0.0) - (0.2 if not texty else 0.0)
    return round(min(0.9, max(0.2, value)), 4)


def memory_from_group(group: Sequence[EventInput], meta: dict | None = None) -> MemoryDraft:
    """One memory for one exchange, citing exactly its events."""
    candidates, categories = _ranked_sentences(group)
    sessions = {e.session_id for e in group}
    return MemoryDraft(
        summary=extractive_summary(group, candidates),
        content="\n".join(f"{speaker(e)}: {event_text(e)}" for e in group),
        importance=_importance(group, categories),
        confidence=_confidence(group),
        time_start=min(e.occurred_at for e in group),
        time_end=max(e.occurred_at for e in group),
        session_id=group[0].session_id if len(sessions) == 1 else None,
        event_ids=tuple(e.id for e in group),
        meta=dict(meta if meta is not None else OFFLINE_META),
    )


def _happens(fact: Fact) -> bool:
    """Whether a statement is about something that happens at a time (an experience, a plan)."""
    return fact.type == "EXPERIENCE" or fact.topic == "plans"


def _dated(content: str, when: list[str], event: EventInput) -> str:
    """A statement with the date its turn's relative time stands for: resolved in place when the
    statement kept the expression ("(tomorrow)"), appended when the turn had exactly one (an experience
    "last week", a plan "next month"), unchanged otherwise."""
    resolved = annotate(content, event.occurred_at)
    if resolved != content or len(when) != 1:
        return resolved
    return f"{content.removesuffix('.')} (≈ {when[0]})."


def extract_knowledge(groups: Sequence[Sequence[EventInput]], first_memory_index: int = 0) -> list[KnowledgeDraft]:
    """Pattern-based knowledge from every event; ``groups[i]`` is memory ``first_memory_index + i``."""
    drafts: list[KnowledgeDraft] = []
    for offset, group in enumerate(groups):
        for event in group:
            text = own_text(event)
            if not text:
                continue
            when = dates_in(text, event.occurred_at)
            for fact in extract_facts(clean(text), from_user=speaks_for_a_person(event), author=event.author):
                content = _dated(fact.content, when if _happens(fact) else [], event)
                drafts.append(
                    KnowledgeDraft(
                        **asdict(replace(fact, content=content)),
                        summary=shorten(content, 120),
                        source_event_ids=(event.id,),
                        source_memory_indices=(first_memory_index + offset,),
                    )
                )
    return dedupe_drafts(drafts)


def distil_offline(
    events: Sequence[EventInput],
    existing_identity: IdentityDraft | None = None,
    count_tokens: TokenCounter = approx_tokens,
    config: GroupingConfig | None = None,
) -> DistillResult:
    """Distil events into memories, knowledge and (maybe) a new identity version, deterministically."""
    groups = group_events(events, count_tokens, config)
    memories = tuple(memory_from_group(group) for group in groups)
    knowledge = tuple(extract_knowledge(groups))
    identity = evolve_identity(existing_identity, [e for g in groups for e in g], knowledge)
    return DistillResult(memories=memories, knowledge=knowledge, identity=identity)


class OfflineEngine:
    """The deterministic, network-free engine (the default when no LLM is configured)."""

    name = "offline"
    model: str | None = None

    def __init__(self, token_counter: TokenCounter = approx_tokens, grouping: GroupingConfig | None = None) -> None:
        self._count = token_counter
        self._grouping = grouping or GroupingConfig()

    async def distil(self, events: list[EventInput], existing_identity: IdentityDraft | None) -> DistillResult:
        """Distil synchronously; pure CPU work that takes well under a millisecond per event."""
        return distil_offline(events, existing_identity, self._count, self._grouping)
