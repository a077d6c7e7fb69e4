"""Session context: a fact told over several turns of one sitting is found through its best turn.

People spread one piece of news over a conversation ("we brought home a parakeet today" … ten
turns later … "the little guy is called Marmalade"). The turn that matches a question best is often
only one part of the answer; the other parts sit in the same session with words the question does
not share. So a candidate's relevance is lifted towards a share (:data:`SESSION_CONTEXT_WEIGHT`)
of the best relevance among the *other* candidates of its session. Pure and order-independent.
"""

from __future__ import annotations

from collections.abc import Sequence

SESSION_CONTEXT_WEIGHT = 0.5


def with_session_context(
    relevances: Sequence[float | None], sessions: Sequence[str | None], weight: float = SESSION_CONTEXT_WEIGHT
) -> list[float | None]:
    """Each relevance raised to at least ``weight`` × the best relevance of another candidate of the
    same session; candidates without a session (or a relevance) keep theirs."""
    top: dict[str, list[float]] = {}  # session → its two best relevances, best first
    for rel, session in zip(relevances, sessions, strict=True):
        if rel is None or session is None:
            continue
        best = top.setdefault(session, [])
        best.append(rel)
        best.sort(reverse=True)
        del best[2:]
    out: list[float | None] = []
    for rel, session in zip(relevances, sessions, strict=True):
        if rel is None or session is None or len(top.get(session, ())) < 2:
            out.append(rel)
            continue
        first, second = top[session]
        other = second if rel == first else first
        out.append(round(max(rel, weight * other), 6))
    return out
