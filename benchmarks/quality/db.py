"""Read-only SQL for benchmark diagnostics and storage figures (the API stays the system under test)."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import text

from elephantasm.db.engine import create_engine


def run_sql(
    database_url: str, statements: list[tuple[str, dict[str, Any]]], autocommit: bool = False
) -> list[list[tuple]]:
    """Run each ``(sql, params)`` on one connection; returns each statement's rows (``[]`` for none)."""

    async def go() -> list[list[tuple]]:
        engine = create_engine(database_url, pooled=False)
        try:
            async with engine.connect() as conn:
                if autocommit:
                    conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
                out = []
                for sql, params in statements:
                    result = await conn.execute(text(sql), params)
                    out.append([tuple(r) for r in result] if result.returns_rows else [])
                return out
        finally:
            await engine.dispose()

    return asyncio.run(go())


def fetch(database_url: str, sql: str, **params: Any) -> list[tuple]:
    """Rows of one query."""
    return run_sql(database_url, [(sql, params)])[0]


DISTILLED_SQL = """
SELECT e.dedupe_key, bool_or(m.state = 'active' AND m.deleted_at IS NULL AND m.merged_into IS NULL)
FROM memories m
CROSS JOIN LATERAL unnest(m.event_ids) AS x(event_id)
JOIN events e ON e.id = x.event_id
WHERE m.anima_id = CAST(:anima AS uuid)
GROUP BY e.dedupe_key
"""


def distilled(database_url: str, anima_id: str) -> dict[str, bool]:
    """Dataset event id → whether some live (active, unmerged) memory cites it; absent = no memory at all."""
    return {key: bool(live) for key, live in fetch(database_url, DISTILLED_SQL, anima=anima_id)}


def memory_states(database_url: str, anima_id: str) -> dict[str, int]:
    """Memory counts by state, plus current and superseded knowledge."""
    rows = fetch(
        database_url,
        "SELECT state, count(*) FROM memories WHERE anima_id = CAST(:a AS uuid) GROUP BY state",
        a=anima_id,
    )
    rows += fetch(
        database_url,
        "SELECT CASE WHEN valid_to IS NULL AND superseded_by IS NULL THEN 'knowledge' "
        "ELSE 'knowledge_superseded' END, count(*) FROM knowledge WHERE anima_id = CAST(:a AS uuid) "
        "GROUP BY 1",
        a=anima_id,
    )
    return {str(k): int(v) for k, v in rows}
