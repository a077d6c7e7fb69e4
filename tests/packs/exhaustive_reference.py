"""The brute-force reference of the candidate statements (``services/packs/topk.py``): every row
of the anima scored once, in a materialized CTE, and the same arms run over those rows.

Production runs one statement shape for every anima (the arms over the table, through whatever
index holds the anima's rows); tests check that its union of ids is this reference's.
"""

from __future__ import annotations

from elephantasm.db.vectors import hnsw_distance, width_is
from elephantasm.services.packs.sql import TSQUERY_CTE
from elephantasm.services.packs.topk import Source, factor_arms, read_union


def exhaustive_rows(src: Source, has_query: bool, dim: int | None) -> str:
    """SQL: every row of ``where`` once, with what each arm orders by: ``id``, ``importance``, ``h``
    (when it happened), ``s`` (the four-factor score), ``e`` (the key), ``d`` (cosine distance in the
    query's space and width, else NULL) and ``r`` (full-text rank when it matches the arm's query,
    else NULL). Each is the arm's own expression, so the arms over these rows order them exactly as
    the arms over the table do."""
    a, happened, score, key = src.alias, src.happened, src.score, src.key
    cols = [f"{a}.id", f"{a}.importance", f"{happened or 'NULL::timestamptz'} AS h", f"{score} AS s"]
    if key is not None:
        cols.append(f"{key} AS e")
    if has_query and dim:
        in_space = f"{width_is(f'{a}.embedding', dim)} AND {a}.embedding_space = :space"
        cols.append(f"CASE WHEN {in_space} THEN {hnsw_distance(f'{a}.embedding', ':qv', dim)} END AS d")
    if has_query:
        cols.append(f"CASE WHEN {a}.fts @@ tsq.q_arm THEN ts_rank({a}.fts, tsq.q_any) END AS r")
    from_tsq = ", tsq" if has_query else ""
    return f"SELECT {', '.join(cols)} FROM {src.table} {a}{src.score_join}{from_tsq} WHERE {src.where}"


def exhaustive_union(src: Source, has_query: bool, dim: int | None = None) -> str:
    """``topk.top_k_union`` (same arguments): its union computed over one read of the rows (:func:`exhaustive_rows`),
    materialized, with the same arms over that (the factor arm keeps its seed, cut and three
    ranges), so it holds the very ids the statement over the table must return."""
    a = src.alias
    rows = f"{a}rows"
    ctes = [TSQUERY_CTE] if has_query else []
    ctes.append(f"{rows} AS MATERIALIZED ({exhaustive_rows(src, has_query, dim)})")
    if src.happened is not None:
        # The arms' expressions are the materialized columns; every row there already passed ``where``.
        arms_sql = factor_arms(rows, a, "true", f"{a}.s", f"{a}.h", key=f"{a}.e" if src.key is not None else None)
        ctes += [f"{name} AS MATERIALIZED ({sql})" for name, sql in arms_sql]
    else:
        ctes.append(f"{a}f AS (SELECT {a}.id FROM {rows} {a} ORDER BY {a}.s DESC, {a}.id LIMIT :k)")
    arms = [f"SELECT id FROM {a}f"]
    if has_query and dim:
        # Ids break distance ties (identical texts have identical vectors): the exact arm is deterministic.
        arms.append(f"(SELECT id FROM {rows} WHERE d IS NOT NULL ORDER BY d, id LIMIT :k)")
    if has_query:
        arms.append(f"(SELECT id FROM {rows} WHERE r IS NOT NULL ORDER BY r DESC, id LIMIT :k)")
    return read_union(ctes, arms, src, has_query)
