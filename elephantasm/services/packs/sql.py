"""SQL fragments for pack candidates: the four-factor score in SQL, query matching, select lists.

The four-factor expression mirrors :func:`elephantasm.domain.scoring.score_candidate` (same
defaults, same clamps), so the top-k it selects in Postgres is the top-k Python would pick; the
final scores are always recomputed in Python, so float noise between the two never shows.
"""

from __future__ import annotations

import math

from elephantasm.db import event_state
from elephantasm.db.models import memory_score_key

_LN2 = repr(math.log(2.0))
# Postgres raises "value out of range: underflow" for exp() below ~-745; exp(-700) ≈ 1e-304 ≈ 0.
_EXP_FLOOR = "-700.0"


def clamp01(expr: str, default: str = "0.5") -> str:
    """``expr`` clamped to [0, 1], ``default`` when NULL (the domain's neutral midpoint)."""
    return f"greatest(0.0, least(1.0, coalesce({expr}, {default})))"


def _age_seconds(at: str) -> str:
    # date_part() is float8; EXTRACT returns numeric since PG 14, which is several times slower
    # on a scan that evaluates this for every memory of the anima.
    return f"greatest(0.0, :as_of_epoch - date_part('epoch', {at}))"


def recency_expr(happened_at: str) -> str:
    """``2^(−age/h)`` from when the experience happened; 0.5 when unknown."""
    return (
        f"(CASE WHEN {happened_at} IS NULL THEN 0.5 ELSE "
        f"exp(greatest({_EXP_FLOOR}, -{_LN2} * {_age_seconds(happened_at)} / :h_rec)) END)"
    )


def freshness_expr(touched_at: str, recalls: str) -> str:
    """``1 − decay = 2^(−t/h)``, h = base·growth^recalls (capped at 64 like the domain); 0.5 when unknown."""
    half_life = f"(:h_dec * power(:growth, least(greatest({recalls}, 0), 64)::float8))"
    return (
        f"(CASE WHEN {touched_at} IS NULL THEN 0.5 ELSE "
        f"exp(greatest({_EXP_FLOOR}, -{_LN2} * {_age_seconds(touched_at)} / {half_life})) END)"
    )


def factor_score(
    importance: str, confidence: str, happened_at: str, touched_at: str, recalls: str, *, decay: bool = True
) -> str:
    """Σ wᵢ·factorᵢ over the four query-independent factors (weights bound as :w_*).

    A zero weight's term is 0.0 without evaluating its factor: query presets weigh recency and
    decay 0, and their exp()/power() were most of the cost of scoring a row. (0.0 · factor is
    0.0 for every factor value, so the score is the same float either way.) ``decay=False``
    leaves the decay term out of the text altogether, for statements run only when its weight is
    0 (the same float again: x + 0.0 = x): then nothing in them reads ``touched_at``/``recalls``.
    """
    fresh = f" + {_unless_zero(':w_fresh', freshness_expr(touched_at, recalls))}" if decay else ""
    return (
        f"(:w_imp * {clamp01(importance)} + :w_conf * {clamp01(confidence)}"
        f" + {_unless_zero(':w_rec', recency_expr(happened_at))}{fresh})"
    )


def _unless_zero(weight: str, factor: str) -> str:
    # A custom plan folds the CASE away (the weight is a constant there); a generic one tests it per row.
    # The cast types the parameter: "= 0" alone would make Postgres infer an integer and truncate it.
    return f"(CASE WHEN CAST({weight} AS float8) = 0.0 THEN 0.0::float8 ELSE {weight} * {factor} END)"


# Query lexemes (english stemming, stop words dropped; at most 8 of them). The speaker labels the
# dreamer writes into every memory ("User: …", "Assistant: …") are dropped too: matching them says
# nothing, yet it made full-text rank follow text length for every question about "the user".
# ``q_any`` OR-s them:
# it ranks every candidate, so one matching more terms ranks higher. ``q_arm`` retrieves the
# full-text arm: with three or more lexemes a row must match at least two of them, which keeps
# a common word from dragging thousands of rows into ranking; with one or two, it is ``q_any``.
# Both are NULL when no lexeme survives (a query of stop words), which matches nothing.
TSQUERY_CTE = """lex AS (
    SELECT l, i FROM unnest(tsvector_to_array(to_tsvector('english', CAST(:q AS text)))) WITH ORDINALITY AS t(l, i)
    WHERE i <= 8 AND l NOT IN ('user', 'assist')
), tsq AS (
    SELECT (SELECT string_agg(quote_literal(l), ' | ') FROM lex)::tsquery AS q_any,
           CASE WHEN (SELECT count(*) FROM lex) < 3 THEN (SELECT string_agg(quote_literal(l), ' | ') FROM lex)
                ELSE (SELECT string_agg(quote_literal(a.l) || ' & ' || quote_literal(b.l), ' | ')
                      FROM lex a JOIN lex b ON a.i < b.i) END::tsquery AS q_arm
)"""
QVEC = "CAST(:qv AS halfvec)"

# The anima's live memories without the org test: what the long-term statement's arms read, as
# the pack indexes are keyed on the anima alone, so their index-only scans cannot
# test the org. An anima belongs to one org; that statement tests ``MEMORY_OWNER`` on the rows it
# finally reads (by primary key, from the heap), so no row of another org is ever returned.
MEMORY_ALIVE_OF_ANIMA = (
    "m.anima_id = :anima AND m.deleted_at IS NULL AND m.merged_into IS NULL AND m.state <> 'archived'"
)
MEMORY_OWNER = "m.org_id = :org"
MEMORY_ALIVE = f"{MEMORY_OWNER} AND {MEMORY_ALIVE_OF_ANIMA}"
KNOWLEDGE_CURRENT = (
    "k.org_id = :org AND k.anima_id = :anima AND k.deleted_at IS NULL "
    "AND k.valid_to IS NULL AND k.superseded_by IS NULL"
)
EVENT_PENDING = f"{event_state.of_anima('e', 'anima', 'org')} AND {event_state.pending_of('e', 'anima')}"

# "When it happened" per table; the pack-candidate indexes are keyed on these.
MEMORY_HAPPENED = "coalesce(m.time_end, m.time_start)"
KNOWLEDGE_HAPPENED = "coalesce(k.valid_from, k.created_at)"
# A memory's recall state is in memory_recalls, joined as ``mr`` where it is read:
# no row means never recalled. Statements that only score with a zero decay weight leave it out
# (``MEMORY_FACTORS_NO_DECAY``), and so do not touch the table at all.
MEMORY_RECALLS = " LEFT JOIN memory_recalls mr ON mr.memory_id = m.id"
MEMORY_TOUCHED = "coalesce(mr.last_recalled_at, m.created_at)"
MEMORY_RECALL_COUNT = "coalesce(mr.recall_count, 0)"
MEMORY_FACTORS = factor_score("m.importance", "m.confidence", MEMORY_HAPPENED, MEMORY_TOUCHED, MEMORY_RECALL_COUNT)
MEMORY_FACTORS_NO_DECAY = factor_score(
    "m.importance", "m.confidence", MEMORY_HAPPENED, MEMORY_TOUCHED, MEMORY_RECALL_COUNT, decay=False
)
# The expression ix_memories_pack_score indexes (text as the index's, columns qualified).
MEMORY_SCORE_KEY = memory_score_key("m")
# Knowledge records no recalls: decay stays neutral (NULL → 0.5) and recency runs from valid_from.
KNOWLEDGE_FACTORS = factor_score("k.importance", "k.confidence", KNOWLEDGE_HAPPENED, "NULL::timestamptz", "0")
EVENT_FACTORS = factor_score("e.importance_score", "NULL::float8", "e.occurred_at", "e.created_at", "0")

# Raw event text is capped: one huge tool result must not crowd a whole pack out (it would be
# skipped anyway if it did not fit; capped, its beginning can still be used).
EVENT_TEXT_CHARS = 2000


def match_columns(alias: str, has_query: bool) -> str:
    """``cosine`` and ``fts_rank`` columns (NULL without a query)."""
    if not has_query:
        return "NULL::float8 AS cosine, NULL::float8 AS fts_rank"
    # A vector of another embedding space is never compared: its cosine is unknown (NULL), and
    # relevance falls back to full text for that row until it is re-embedded.
    # Events store neither a vector nor a tsvector: their match is computed by the compile (event_match).
    cosine = f"CASE WHEN {alias}.embedding_space = :space THEN 1 - ({alias}.embedding <=> {QVEC}) END"
    return (
        f"{cosine} AS cosine, "
        # No text match is a rank of 0 (not missing): relevance then fuses cosine with 0.
        f"CASE WHEN {alias}.fts @@ tsq.q_any THEN ts_rank({alias}.fts, tsq.q_any)::float8 ELSE 0.0 END AS fts_rank"
    )


# No provenance here: it is read for the items a pack serves only (services/packs/provenance.py).
# The recall pair needs ``MEMORY_RECALLS`` in the FROM clause. Each row carries what the compile
# reads and no more: ``text`` is the summary, else the content (what the prompt line and the wire
# show); the content again as ``body`` and the turn vectors only when they are in the query's
# embedding space (the turn snippets need both); no space label (a long string decoded per row).
# A memory's content (the exchange, often kilobytes) is therefore not sent for the hundreds of
# candidates whose summary is their text. Positional: ``candidates._memory`` unpacks them in order.
def memory_columns(has_query: bool) -> str:
    """The long-term/session memory select list (see above), ``cosine`` and ``fts_rank`` last."""
    in_space = "m.embedding_space = :space"
    turns = (
        f"CASE WHEN {in_space} THEN m.turn_vectors END AS turn_vectors, "
        f"CASE WHEN {in_space} AND octet_length(m.turn_vectors) > 0 THEN m.content END AS body"
        if has_query
        else "NULL::bytea AS turn_vectors, NULL::text AS body"
    )
    return (
        "m.id, coalesce(nullif(m.summary, ''), m.content, '') AS text, m.importance, m.confidence, m.session_id, "
        f"m.time_start, m.time_end, m.created_at, mr.last_recalled_at, {MEMORY_RECALL_COUNT} AS recall_count, "
        f"{turns}"
    )


# Positional as well (``candidates._knowledge``): when it happened is computed here.
KNOWLEDGE_COLUMNS = f"k.id, k.type, k.topic, k.content, k.importance, k.confidence, {KNOWLEDGE_HAPPENED} AS happened"
# An event's author and summary are not read here (the summary feeds only the lexemes, made in SQL).
EVENT_COLUMNS = (
    f"e.id, e.event_type, e.role, left(e.content, {EVENT_TEXT_CHARS}) AS content, "
    "e.occurred_at, e.session_id, e.importance_score, e.created_at"
)
