"""Where an event stands with the dreamer, as SQL fragments every reader shares.

Events are insert-only. Each gets ``seq``, its place in its anima's sequence, from
``animas.event_seq`` under the anima's row lock, so an anima's seqs are in commit order: a snapshot
that sees seq ``s`` sees every lower seq of that anima. The dreamer distils the lowest pending seqs
and moves the watermark ``animas.distilled_seq`` in the same transaction, so

- pending  = ``seq > animas.distilled_seq`` (claimed by a running run or not);
- distilled_at = the ``distilled_at`` of the ``dream_chunks`` row whose range holds ``seq``.
"""

from __future__ import annotations


def pending(event: str = "e", anima: str = "a") -> str:
    """An event of alias ``event`` is pending, given its anima's row under alias ``anima`` (as a
    closed range: see :func:`pending_of`)."""
    return f"{event}.seq BETWEEN {anima}.distilled_seq + 1 AND {anima}.event_seq"


def of_anima(event: str, anima_param: str, org_param: str | None = None) -> str:
    """An event of alias ``event`` belongs to the anima bound as ``:anima_param`` (and, with
    ``org_param``, that anima is the org's bound as ``:org_param``): by its key, looked up once per
    statement. The key is an event's only reference to its anima and org, and the
    events' indexes lead with it."""
    org = f" AND an.org_id = :{org_param}" if org_param else ""
    return f"{event}.anima_key = (SELECT an.key FROM animas an WHERE an.id = :{anima_param}{org})"


def anima_id(event: str = "e") -> str:
    """The id of the anima of the event of alias ``event``, from its key (one ``uq_animas_key`` probe)."""
    return f"(SELECT an.id FROM animas an WHERE an.key = {event}.anima_key)"


def pending_of(event: str, anima_param: str) -> str:
    """An event of alias ``event`` is pending, for the anima bound as ``:anima_param``.

    Written as the closed range up to the anima's ``event_seq`` (no seq a snapshot sees is above it):
    the planner then takes it for a narrow range of ``uq_events_anima_seq``; with ``seq > (…)`` alone
    it guessed a third of the anima and walked a session's events by time instead.
    """
    anima = f"FROM animas an WHERE an.id = :{anima_param}"
    return f"{event}.seq BETWEEN (SELECT an.distilled_seq + 1 {anima}) AND (SELECT an.event_seq {anima})"


def distilled_at(event: str = "e", anima: str | None = None) -> str:
    """When the event of alias ``event`` was distilled (NULL while pending): one index probe into
    its anima's chunks (``uq_dream_chunks_anima_last``); distilled chunks never overlap. ``anima``:
    an SQL expression for the event's anima id when the caller has it (else :func:`anima_id`)."""
    return (
        f"(SELECT c.distilled_at FROM dream_chunks c WHERE c.anima_id = {anima or anima_id(event)} "
        f"AND c.last_seq >= {event}.seq AND c.first_seq <= {event}.seq AND c.distilled_at IS NOT NULL "
        "ORDER BY c.last_seq LIMIT 1)"
    )
