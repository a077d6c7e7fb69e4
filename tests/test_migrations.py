"""Migrations build the schema from nothing, tear it down to nothing, build it again, and the result
is the database the models build (``metadata.create_all`` with ``elephantasm.db.ddl``): the same
tables, columns, indexes, constraints, functions, triggers, statistics and storage (no drift).

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
from alembic import command
from elephantasm.db.migrate import alembic_config, upgrade
from elephantasm.db.models import HNSW_EF_CONSTRUCTION, HNSW_M
from elephantasm.db.vectors import INDEXED_DIMS
from tests.support.databases import connect, create_database, drop_database

# docs/design.md §4, with the provenance and history tables the models split out. A memory's
# provenance (design: memory_events) is its ``event_ids`` array.
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
# events have no tsvector: a compile text-matches an anima's pending events from lexemes it asks
# Postgres for once (services/packs/event_match.py).
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
    events: their anima (and through it their org) is ``anima_key`` alone; and the server's
    embedding-space labels, which are no tenant's data."""
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
    """HNSW (cosine) on every embedding column, one partial index per indexed width, and GIN on
    every tsvector column that is searched."""
    await asyncio.to_thread(upgrade, empty_db)
    indexes = await _indexes(empty_db)
    hnsw = {(table, d) for table, _, d in indexes if "USING hnsw " in d}
    for table in HNSW_TABLES:
        for dim in INDEXED_DIMS:
            # Alembic's compare skips expression indexes: the models' parameters are checked here.
            assert any(
                t == table
                and f"(embedding)::halfvec({dim})" in d
                # Only rows of large animas.
                and f"WHERE ((vector_dims(embedding) = {dim}) AND vector_indexed)" in d
                and f"WITH (m='{HNSW_M}', ef_construction='{HNSW_EF_CONSTRUCTION}')" in d
                for t, d in hnsw
            ), (table, dim, hnsw)
    assert _indexed_with(indexes, "gin") >= GIN_INDEXED
    for _, name, definition in indexes:
        if "USING hnsw" in definition:
            assert "halfvec_cosine_ops" in definition, name  # half precision


async def test_downgrade_to_base_leaves_nothing_and_upgrade_again_works(empty_db: str) -> None:
    """The downgrade path is real: base has no tables but alembic's own (empty), and head comes back."""
    await asyncio.to_thread(upgrade, empty_db)
    await asyncio.to_thread(command.downgrade, alembic_config(empty_db), "base")
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


# What a schema is, read from the catalogs (public schema, pgvector's own objects and Alembic's table
# left out). Not-null constraints are compared as the columns' nullability: their names are Postgres's.
_CATALOG = {
    "columns": """
        SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
               pg_get_expr(d.adbin, d.adrelid), a.attgenerated, a.attidentity, a.attstorage
        FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
        LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE c.relnamespace = 'public'::regnamespace AND c.relkind = 'r' AND a.attnum > 0
          AND NOT a.attisdropped AND c.relname <> 'alembic_version'""",
    "constraints": """
        SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) FROM pg_constraint
        WHERE connamespace = 'public'::regnamespace AND contype <> 'n'
          AND conrelid::regclass::text <> 'alembic_version'""",
    "indexes": """
        SELECT tablename, indexname, indexdef FROM pg_indexes
        WHERE schemaname = 'public' AND tablename <> 'alembic_version'""",
    "functions": """
        SELECT p.proname, pg_get_functiondef(p.oid) FROM pg_proc p
        WHERE p.pronamespace = 'public'::regnamespace
          AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')""",
    "triggers": "SELECT tgname, pg_get_triggerdef(oid) FROM pg_trigger WHERE NOT tgisinternal",
    "statistics": """
        SELECT stxname, pg_get_statisticsobjdef(oid) FROM pg_statistic_ext
        WHERE stxnamespace = 'public'::regnamespace""",
    "storage parameters": """
        SELECT relname, reloptions::text FROM pg_class
        WHERE relnamespace = 'public'::regnamespace AND reloptions IS NOT NULL""",
    "types": """
        SELECT t.typname, array_agg(e.enumlabel ORDER BY e.enumsortorder)::text
        FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid
        WHERE t.typnamespace = 'public'::regnamespace GROUP BY t.typname""",
    "extensions": "SELECT extname FROM pg_extension WHERE extname <> 'plpgsql'",
}


async def _catalog(url: str) -> dict[str, set[tuple[object, ...]]]:
    conn = await connect(url)
    try:
        return {name: {tuple(r) for r in await conn.fetch(sql)} for name, sql in _CATALOG.items()}
    finally:
        await conn.close()


async def _create_all(url: str) -> None:
    engine = create_async_engine(url)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(SQLModel.metadata.create_all)
    finally:
        await engine.dispose()


async def test_migrated_database_is_the_one_the_models_build(empty_db: str, pg_url: str) -> None:
    """A migrated database and one made by ``metadata.create_all`` (the models plus ``db.ddl``) have
    the same catalogs: nothing Alembic's compare cannot see (functions, triggers, expression and
    partial indexes, statistics, storage) drifts either."""
    await asyncio.to_thread(upgrade, empty_db)
    built = create_database(pg_url, "ddl")
    try:
        await _create_all(built)
        migrated, modelled = await _catalog(empty_db), await _catalog(built)
    finally:
        drop_database(built)
    assert migrated["functions"] and migrated["triggers"] and migrated["statistics"]  # the comparison sees them
    for part, rows in migrated.items():
        assert rows == modelled[part], (
            f"{part} differ; only in the migrations: {sorted(rows - modelled[part])}; "
            f"only in the models: {sorted(modelled[part] - rows)}"
        )
