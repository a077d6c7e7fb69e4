"""Deterministic pack-like text for the KV benchmark: memory lines until a token target is met."""

from __future__ import annotations

from collections.abc import Callable

SUBJECTS = (
    "sister",
    "landlord",
    "manager",
    "neighbour",
    "dentist",
    "coach",
    "cousin",
    "teacher",
    "friend Jonas",
    "colleague Mei",
    "partner",
    "son",
    "daughter",
    "uncle",
    "aunt",
    "mentor",
)
VERBS = (
    "moved to",
    "recommended",
    "asked about",
    "complained about",
    "booked a trip to",
    "started learning",
    "bought a ticket for",
    "wrote a letter about",
    "planned a dinner in",
    "painted a picture of",
)
OBJECTS = (
    "Lisbon",
    "the jazz festival",
    "a vegan bakery",
    "Portuguese grammar",
    "the old harbour",
    "Kyoto",
    "a second-hand piano",
    "the climbing gym",
    "Dvořák's eighth symphony",
    "the river walk",
    "a tax form",
    "the allotment garden",
    "a night train to Vienna",
    "sourdough starters",
    "the chess club",
)


def memory_line(i: int) -> tuple[str, float]:
    """The ``i``-th memory line and its score (later lines score lower, as a pack ranks them)."""
    s, v, o = SUBJECTS[i % len(SUBJECTS)], VERBS[(i * 7) % len(VERBS)], OBJECTS[(i * 11) % len(OBJECTS)]
    return f"The user's {s} {v} {o} (note {i}).", round(1.0 - i / 1000, 4)


def pack_text(target_tokens: int, count: Callable[[str], int]) -> tuple[str, list[tuple[str, str, float]]]:
    """System text of about ``target_tokens`` tokens and its items (id, text, score)."""
    head = "You are a helpful assistant with a long-term memory. What you remember:\n\n## Long-term memories\n"
    lines, items, total = [], [], count(head)
    while True:
        text, score = memory_line(len(lines))
        cost = count(f"- {text}\n")
        if total + cost > target_tokens:
            return head + "".join(lines), items
        lines.append(f"- {text}\n")
        items.append((f"m{len(items)}", text, score))
        total += cost
