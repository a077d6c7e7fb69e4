"""Alembic is the only source of schema: migrations build it from nothing, tear it down to nothing,
build it again, and the result matches the table models exactly (no drift).

Each test uses a database of its own on the session's server, so the shared test database is
never touched.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.ext.asyncio import create_async_engine
from sqlmodel import SQLModel

import elephantasm.db.models  # noqa: F401  (registers every table on SQLModel.metadata)
from elephantasm.db.migrate import downgrade, upgrade
from elephantasm.db.models import HNSW_EF_CONSTRUCTION, HNSW_M
from elephantasm.db.vectors import INDEXED_DIMS
from tests.support.databases import connect, create_database, drop_database

# docs/design.md §4, with the provenance and history tables the models split out. A memory's
# provenance (design: memory_events) is its ``event_ids`` array since migration 0013.
DESIGN_TABLES = {
    "orgs",
    "api_keys",
    "animas",
    "events",
    "memories",
    "knowledge",
    "knowledge_memories",
    "identities",
    "identity_history",
    "memory_packs",
    "pack_snapshots",
    "dream_runs",
    "dream_actions",
}
# Tables whose rows belong to one anima (docs/design.md §2: org_id and anima_id are both distribution keys).
ANIMA_SCOPED = DESIGN_TABLES - {"orgs", "api_keys", "animas"}

HNSW_TABLES = ("memories", "knowledge")
# events have no tsvector since 0012: a compile text-matches an anima's pending events from lexemes
# it asks Postgres for once (services/packs/event_match.py; benchmarks/RESULTS.md, issue 15).
GIN_INDEXED = {("memories", "fts"), ("knowledge", "fts")}


@pytest.fixture
def empty_db(pg_url: str) -> Iterator[str]:
    """A brand-new, empty database; dropped afterwards."""
    url = create_database(pg_url, "mig")
    yield url
    drop_database(url)


async def _tables(url: str) -> dict[str, set[str]]:
    """Table name → its column names, for the public schema."""
    conn = await connect(url)
    try:
        rows = await conn.fetch(
            "SELECT c.table_name, c.column_name FROM information_schema.columns c "
            "JOIN information_schema.tables t USING (table_schema, table_name) "
            "WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE'"
        )
    finally:
        await conn.close()
    tables: dict[str, set[str]] = {}
    for r in rows:
        tables.setdefault(r["table_name"], set()).add(r["column_name"])
    return tables


async def _indexes(url: str) -> list[tuple[str, str, str]]:
    """(table, index name, definition) for the public schema."""
    conn = await connect(url)
    try:
        rows = await conn.fetch("SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public'")
    finally:
        await conn.close()
    return [(r["tablename"], r["indexname"], r["indexdef"]) for r in rows]


async def _alembic_rows(url: str) -> int:
    conn = await connect(url)
    try:
        return await conn.fetchval("SELECT count(*) FROM alembic_version")
    finally:
        await conn.close()


def _indexed_with(indexes: list[tuple[str, str, str]], method: str) -> set[tuple[str, str]]:
    """(table, column) pairs covered by an index using ``method`` (e.g. ``hnsw``, ``gin``)."""
    found = set()
    for table, _, definition in indexes:
        if f"USING {method} " in definition:
            column = definition.split("(", 1)[1].split(")", 1)[0].split()[0]
            found.add((table, column))
    return found


async def test_upgrade_from_empty_creates_the_design_schema(empty_db: str) -> None:
    """Every §4 table exists and carries org_id (and anima_id where rows belong to an anima), except
    events: their anima (and through it their org) is ``anima_key`` alone (migration 0022); and the
    server's embedding-space labels (migration 0026), which are no tenant's data."""
    await asyncio.to_thread(upgrade, empty_db)
    tables = await _tables(empty_db)
    assert set(tables) >= DESIGN_TABLES, f"missing tables: {DESIGN_TABLES - set(tables)}"
    assert {"anima_key"} <= tables["events"] and not {"org_id", "anima_id"} & tables["events"]
    for name, columns in tables.items():
        if name in {"orgs", "alembic_version", "events", "embedding_spaces"}:
            continue
        assert "org_id" in columns, f"table {name} has no org_id"
    for name in ANIMA_SCOPED - {"events"}:
        assert "anima_id" in tables[name], f"table {name} has no anima_id"
    assert await _alembic_rows(empty_db) == 1


async def test_vector_and_fulltext_indexes_exist(empty_db: str) -> None:
    """HNSW (cosine) on every embedding column, one partial index per indexed width (0010), and GIN
    on every tsvector column that is searched."""
    await asyncio.to_thread(upgrade, empty_db)
    indexes = await _indexes(empty_db)
    hnsw = {(table, d) for table, _, d in indexes if "USING hnsw " in d}
    for table in HNSW_TABLES:
        for dim in INDEXED_DIMS:
            # Alembic's compare skips expression indexes: the models' parameters are checked here.
            assert any(
                t == table
                and f"(embedding)::halfvec({dim})" in d
                # Only rows of large animas (memories 0019, knowledge 0020).
                and f"WHERE ((vector_dims(embedding) = {dim}) AND vector_indexed)" in d
                and f"WITH (m='{HNSW_M}', ef_construction='{HNSW_EF_CONSTRUCTION}')" in d
                for t, d in hnsw
            ), (table, dim, hnsw)
    assert _indexed_with(indexes, "gin") >= GIN_INDEXED
    for _, name, definition in indexes:
        if "USING hnsw" in definition:
            assert "halfvec_cosine_ops" in definition, name  # half precision since 0003


async def test_downgrade_to_base_leaves_nothing_and_upgrade_again_works(empty_db: str) -> None:
    """The downgrade path is real: base has no tables but alembic's own (empty), and head comes back."""
    await asyncio.to_thread(upgrade, empty_db)
    await asyncio.to_thread(downgrade, empty_db, "base")
    assert set(await _tables(empty_db)) == {"alembic_version"}
    assert await _alembic_rows(empty_db) == 0
    assert {table for table, _, _ in await _indexes(empty_db)} == {"alembic_version"}

    await asyncio.to_thread(upgrade, empty_db)
    assert set(await _tables(empty_db)) >= DESIGN_TABLES
    assert await _alembic_rows(empty_db) == 1


async def test_models_do_not_drift_from_migrations(empty_db: str) -> None:
    """Autogenerate against the migrated database finds nothing to do.

    Types are compared by default; server defaults are compared too (off by default in Alembic),
    so a ``server_default`` changed in a model without a migration is caught as well. Nothing is
    filtered out.
    """
    await asyncio.to_thread(upgrade, empty_db)
    opts = {"compare_type": True, "compare_server_default": True}
    engine = create_async_engine(empty_db)
    try:
        async with engine.connect() as conn:
            diff = await conn.run_sync(
                lambda sync_conn: compare_metadata(MigrationContext.configure(sync_conn, opts=opts), SQLModel.metadata)
            )
    finally:
        await engine.dispose()
    assert diff == [], "models and migrations differ; write a migration:\n" + "\n".join(map(repr, diff))
