"""Evidence recall (ER_any / ER_all) and stale rate, per system, question kind and budget.

- A question is **covered** by a pack when *all* of its evidence event ids are among the event ids
  the pack cites (Elephantasm: the union of its items' provenance; a baseline: the turns it holds):
  the share of covered questions is **ER_all**. **ER_any** is the share of questions with *at least
  one* evidence event cited; the two differ only for questions with several evidence events.
  **Partial** coverage is the share of the evidence cited, averaged over questions.
- A pack is **stale** when its rendered text contains any of the question's superseded values
  (case-insensitive, whole words). The stale rate is taken over the questions that have stale
  values (updated facts); other questions cannot be stale and would only dilute it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from benchmarks.quality.dataset import Question

ALL = "all"


def mentions(text: str, value: str) -> bool:
    """Whether ``value`` occurs in ``text`` as whole words, case-insensitively."""
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text, re.IGNORECASE) is not None


def is_stale(context: str, stale_values: Iterable[str]) -> bool:
    """Whether the pack text holds any superseded value."""
    return any(mentions(context, v) for v in stale_values)


@dataclass(frozen=True)
class Outcome:
    """How one system's pack for one question at one budget did."""

    system: str
    question_id: str
    kind: str
    budget: int
    covered: bool  # all evidence cited (ER_all)
    any_cited: bool  # at least one evidence event cited (ER_any)
    partial: float
    stale: bool | None  # None: the question has no superseded values
    tokens: int


def score_pack(
    system: str, question: Question, budget: int, cited: Iterable[str], context: str, tokens: int
) -> Outcome:
    """Score one pack: ``cited`` are dataset event ids, ``context`` its rendered text."""
    evidence = set(question.evidence_event_ids)
    hit = evidence & set(cited)
    return Outcome(
        system=system,
        question_id=question.id,
        kind=question.kind,
        budget=budget,
        covered=hit == evidence,
        any_cited=bool(hit),
        partial=len(hit) / len(evidence),
        stale=is_stale(context, question.stale_values) if question.stale_values else None,
        tokens=tokens,
    )


@dataclass(frozen=True)
class Cell:
    """Aggregates over the outcomes of one (system, kind, budget)."""

    n: int
    recall: float  # ER_all
    recall_any: float  # ER_any
    partial: float
    stale_n: int
    stale_rate: float | None
    mean_tokens: float


def _cell(outcomes: list[Outcome]) -> Cell:
    n = len(outcomes)
    stale = [o.stale for o in outcomes if o.stale is not None]
    return Cell(
        n=n,
        recall=sum(o.covered for o in outcomes) / n,
        recall_any=sum(o.any_cited for o in outcomes) / n,
        partial=sum(o.partial for o in outcomes) / n,
        stale_n=len(stale),
        stale_rate=(sum(stale) / len(stale)) if stale else None,
        mean_tokens=sum(o.tokens for o in outcomes) / n,
    )


def aggregate(outcomes: Iterable[Outcome]) -> dict[tuple[str, str, int], Cell]:
    """Cells keyed by ``(system, kind, budget)``, with kind :data:`ALL` for every question."""
    groups: dict[tuple[str, str, int], list[Outcome]] = defaultdict(list)
    for o in outcomes:
        groups[(o.system, o.kind, o.budget)].append(o)
        if o.kind != ALL:  # a dataset without kinds labels every question "all"
            groups[(o.system, ALL, o.budget)].append(o)
    return {key: _cell(group) for key, group in sorted(groups.items())}
