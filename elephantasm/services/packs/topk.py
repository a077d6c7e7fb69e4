"""Candidate statements: exact four-factor top-k with index pruning, ∪ cosine top-k ∪ full-text top-k.

**Four factors without scanning every row.** A memory's score is
``s = w_imp·imp + w_conf·conf + w_rec·rec + w_fresh·fresh`` with every factor in [0, 1]. Split
the anima's rows at ``t_cut`` (``L`` recency half-lives before ``as_of``, so an older row has
``rec < ε = 2^−L``):

1. *seed*: score the most recent and the most important ``:seed`` rows (two short index walks);
   the k-th best distinct score ``c`` among them is a lower bound of the true k-th best score.
2. an older row scores at most ``w_imp·imp + w_conf + w_rec·ε + w_fresh``; if its importance
   is below ``(c − w_conf − w_rec·ε − w_fresh) / w_imp`` it scores below ``c`` and cannot be in
   the top k, so only ``importance ≥ cut`` is read, as a range of the importance index.
3. the top k of (recent rows) ∪ (older rows above the cut) ∪ (undated rows) therefore
   contains the exact top k; all reads are index-only scans of the covering pack
   indexes (for memories keyed on the anima alone: the org is tested on the rows read in the end). When the bound cannot prune (few rows, zero importance weight) it degrades to the
   plain full top-k, never to a wrong answer.
4. *key* (memories, when decay weighs nothing: the query presets): the older rows above the cut
   are many, since the cut must assume confidence 1. An index on ``e = imp + ρ·conf`` (ρ =
   ``SCORE_KEY_RATIO``) orders them nearly like the score: the first ``:k`` of
   them in ``e`` order are k rows of the arm, so the arm's k-th best score is at least their
   lowest, ``c₂``. As ``w_imp·imp + w_conf·conf ≤ w_imp·(e + max(0, w_conf/w_imp − ρ))``, a row
   scoring ``c₂`` or more has ``e ≥ (c₂ − w_rec·ε − w_fresh)/w_imp − max(0, w_conf/w_imp − ρ)``:
   only that range of the key is read (~k rows when the weights' ratio is ρ), and the arm's top k
   by score, ids breaking ties, is the same set it was over all the older rows above the cut.
"""

from __future__ import annotations

from dataclasses import dataclass

from elephantasm.db.models import SCORE_KEY_RATIO
from elephantasm.db.vectors import hnsw_distance, width_is
from elephantasm.services.packs.sql import TSQUERY_CTE, match_columns

# Rows older than RECENCY_SPLIT half-lives have recency < 2^-RECENCY_SPLIT.
RECENCY_SPLIT = 4
RECENCY_EPS = 2.0**-RECENCY_SPLIT
SEED_ROWS = 200
# Float rounding between the score and the key (both ~1): widens the key range, never narrows it.
KEY_SLACK = 1e-9


def recency_cut_seconds(half_life_seconds: float) -> float:
    """How far before ``as_of`` the recent/older split lies (capped: datetimes end at year 1)."""
    return min(half_life_seconds * RECENCY_SPLIT, 3e10)


def factor_arms(
    table: str, a: str, where: str, score: str, happened: str, join: str = "", key: str | None = None
) -> list[tuple[str, str]]:
    """CTEs ``(name, sql)`` whose final ``{a}f`` holds ids containing the exact four-factor top ``:k``.

    ``join``: what ``score`` reads besides ``{table} {a}`` (a LEFT JOIN on a unique key). ``key``:
    an indexed expression, importance + ``SCORE_KEY_RATIO`` × confidence (module doc, 4.)."""
    src = f"{table} {a}{join}"
    # NULLIF: with a zero importance weight the bound is NULL and the cut becomes -Infinity.
    imp_bound = f"(cut.s - :w_conf - :w_fresh - :w_rec * {RECENCY_EPS!r}) / NULLIF(:w_imp, 0)"
    # With a key, "+ 0.0" (the same value for every float) keeps the planner off the importance
    # index: the key's range is the one to read.
    importance = f"{a}.importance" if key is None else f"{a}.importance + 0.0"
    older = f"{where} AND {happened} + interval '0' < :t_cut AND {importance} >= (SELECT imp FROM {a}cut)"
    keyed: list[tuple[str, str]] = []
    if key is not None:
        keyed = [(f"{a}kcut", key_cut(src, older, score, key))]
        older += f" AND {key} >= (SELECT e FROM {a}kcut)"
    return [
        (
            f"{a}seed",
            (
                f"(SELECT {a}.id, {score} AS s FROM {src} WHERE {where} "
                f"ORDER BY {happened} DESC NULLS FIRST LIMIT :seed) UNION "
                f"(SELECT {a}.id, {score} AS s FROM {src} WHERE {where} ORDER BY {a}.importance DESC LIMIT :seed)"
            ),
        ),
        (
            f"{a}cut",
            (
                f"SELECT CASE WHEN b > 0 THEN b ELSE '-Infinity'::float8 END AS imp FROM (SELECT {imp_bound} AS b "
                f"FROM (SELECT coalesce((SELECT s FROM {a}seed ORDER BY s DESC OFFSET :kth LIMIT 1), -1.0) AS s) cut) x"
            ),
        ),
        *keyed,
        (
            f"{a}f",
            (
                f"(SELECT {a}.id FROM {src} WHERE {where} AND {happened} >= :t_cut "
                f"ORDER BY {score} DESC, {a}.id LIMIT :k) UNION ALL "
                # "+ interval '0'" keeps the planner on the importance (or key) index for this arm:
                # the time condition only filters, the importance cut is the range actually read.
                f"(SELECT {a}.id FROM {src} WHERE {older} ORDER BY {score} DESC, {a}.id LIMIT :k) UNION ALL "
                f"(SELECT {a}.id FROM {src} WHERE {where} AND {happened} IS NULL "
                f"ORDER BY {score} DESC, {a}.id LIMIT :k)"
            ),
        ),
    ]


def key_cut(src: str, older: str, score: str, key: str) -> str:
    """The older arm's lower bound on ``key`` (module doc, 4.): from its first ``:k`` rows in key order."""
    w_imp = "NULLIF(CAST(:w_imp AS float8), 0)"
    kth = f"(SELECT s FROM (SELECT {score} AS s FROM {src} WHERE {older} ORDER BY {key} DESC LIMIT :k) top " + (
        "ORDER BY s DESC OFFSET :kth LIMIT 1)"
    )
    bound = (
        f"({kth} - CAST(:w_rec AS float8) * {RECENCY_EPS!r} - CAST(:w_fresh AS float8)) / {w_imp}"
        f" - greatest(0.0, CAST(:w_conf AS float8) / {w_imp} - {SCORE_KEY_RATIO!r}) - {KEY_SLACK!r}"
    )
    return f"SELECT coalesce({bound}, '-Infinity'::float8) AS e"


@dataclass(frozen=True, slots=True)
class Source:
    """A table as a candidate statement reads it (SQL fragments of the code, never values).

    ``where``: the rows (for a large anima with the partial indexes' predicate,
    ``elephantasm.db.size_switches.vector_rows_sql``); ``score``: the four-factor expression;
    ``columns``: what the final read returns. ``happened``: when a row happened, which prunes the
    factor arm (module doc); None scores every row (pending events: few, and no covering index).
    ``score_join`` is what ``score`` reads besides the table, ``row_join`` what ``columns`` read;
    both LEFT JOINs on a unique key. ``key``: see :func:`factor_arms`. ``owner``: a condition the
    final read tests on every row (the org, when ``where`` leaves it out for index-only arms).
    """

    table: str
    alias: str
    where: str
    score: str
    columns: str
    happened: str | None = None
    score_join: str = ""
    row_join: str = ""
    key: str | None = None
    owner: str = ""


def top_k_union(src: Source, has_query: bool, dim: int | None = None) -> str:
    """One statement: four-factor top ``:k`` ∪ cosine top ``:k`` (HNSW) ∪ full-text top ``:k`` (GIN).

    The union's rows are then read once, by primary key, with both match signals. ``dim`` is the
    query vector's width: the cosine arm is written for that width's HNSW index. The per-anima
    indexes the arms read hold large animas' rows only; a small anima's statement is the same
    without their predicate, and its arms read its few rows through an anima-keyed btree. Every arm
    breaks ties by id, so an exact scan and an index agree on which rows make the k.
    """
    table, a, where, score = src.table, src.alias, src.where, src.score
    ctes = [TSQUERY_CTE] if has_query else []
    if src.happened is not None:
        # MATERIALIZED: the seed and the cut are computed once, not once per reference.
        arms_sql = factor_arms(table, a, where, score, src.happened, src.score_join, src.key)
        ctes += [f"{name} AS MATERIALIZED ({sql})" for name, sql in arms_sql]
    else:
        ctes.append(
            f"{a}f AS (SELECT {a}.id FROM {table} {a}{src.score_join} WHERE {where} "
            f"ORDER BY {score} DESC, {a}.id LIMIT :k)"
        )
    arms = [f"SELECT id FROM {a}f"]
    if has_query and dim:
        ctes.append(
            f"{a}v AS (SELECT {a}.id FROM {table} {a} WHERE {where} AND {width_is(f'{a}.embedding', dim)} "
            f"AND {a}.embedding_space = :space "
            # Ids break distance ties (identical texts have identical vectors); an incremental sort
            # over the HNSW scan keeps the index in use.
            f"ORDER BY {hnsw_distance(f'{a}.embedding', ':qv', dim)}, {a}.id LIMIT :k)"
        )
        arms.append(f"SELECT id FROM {a}v")
    if has_query:
        ctes.append(
            f"{a}t AS (SELECT {a}.id FROM {table} {a}, tsq WHERE {where} AND {a}.fts @@ tsq.q_arm "
            f"ORDER BY ts_rank({a}.fts, tsq.q_any) DESC, {a}.id LIMIT :k)"
        )
        arms.append(f"SELECT id FROM {a}t")
    return read_union(ctes, arms, src, has_query)


def read_union(ctes: list[str], arms: list[str], src: Source, has_query: bool) -> str:
    """The statement: ``ctes``, then the rows of the union of ``arms`` (each ``SELECT id …``)."""
    table, a = src.table, src.alias
    ctes = [*ctes, f"ids AS ({' UNION '.join(arms)})"]
    from_tsq = ", tsq" if has_query else ""
    # The union's rows are read by primary key: "= ANY(ARRAY(...))" is one index scan over the few
    # hundred ids. (A join on ``ids`` let the planner hash-join a sequential scan of the anima's
    # whole table: 4 ms of the long-term statement and 6.7 ms of the pending one at 10k rows.)
    # In id order: the packer breaks score ties by candidate order, and without it the order was the
    # plan's (heap order of a small table's scan, of memory_recalls' in a hash join), which differs
    # between a small anima's statement and a large one's over the same rows.
    return (
        f"WITH {', '.join(ctes)} SELECT {src.columns}, {match_columns(a, has_query)} "
        f"FROM {table} {a}{src.row_join}{from_tsq} WHERE {a}.id = ANY(ARRAY(SELECT id FROM ids))"
        + (f" AND {src.owner}" if src.owner else "")
        + f" ORDER BY {a}.id"
    )


def scoped_select(table: str, a: str, where: str, columns: str, order: str, has_query: bool, join: str = "") -> str:
    """A plain filtered, ordered, limited (``:k``) select with the match columns (``join``: what ``columns`` read)."""
    with_tsq = f"WITH {TSQUERY_CTE} " if has_query else ""
    from_tsq = " CROSS JOIN tsq" if has_query else ""
    return (
        f"{with_tsq}SELECT {columns}, {match_columns(a, has_query)} FROM {table} {a}{join}{from_tsq} "
        f"WHERE {where} ORDER BY {order} LIMIT :k"
    )
