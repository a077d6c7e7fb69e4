"""The schema the table models cannot state: the pgvector extension, functions, triggers, extended
statistics and column storage. Attached to the models' metadata, so ``metadata.create_all`` builds
the database the migrations build; ``tests/test_migrations.py`` compares the two, catalog by catalog
(functions, triggers, indexes, constraints, statistics, storage), so neither drifts unseen.

Migrations keep their own copy of what they ran (a migration is history); this module is what the
schema is now.
"""

from __future__ import annotations

from sqlalchemy import DDL, MetaData, Table, event

EXTENSIONS = ("CREATE EXTENSION IF NOT EXISTS vector",)

FUNCTIONS = (
    r"""
CREATE FUNCTION memories_vector_indexed() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    NEW.vector_indexed := coalesce(
        (SELECT a.vectors_indexed FROM animas a WHERE a.id = NEW.anima_id), false);
    RETURN NEW;
END $$""",
)

TABLE_DDL: dict[str, tuple[str, ...]] = {
    # The journal's arrays compressed inline rather than moved out to TOAST (with toast_tuple_target).
    "dream_actions": tuple(
        f"ALTER TABLE dream_actions ALTER COLUMN {column} SET STORAGE MAIN"
        for column in ("target_ids", "befores", "afters")
    ),
    # Every anima-scoped statement filters on both keys; these tell the planner they are not independent.
    "knowledge": ("CREATE STATISTICS st_knowledge_org_anima (dependencies) ON org_id, anima_id FROM knowledge",),
    "memories": ("CREATE STATISTICS st_memories_org_anima (dependencies) ON org_id, anima_id FROM memories",),
}

TRIGGERS = (
    # An anima's rows enter the HNSW, pack and full-text indexes with the anima's flag (elephantasm.db.vectors).
    "CREATE TRIGGER trg_memories_vector_indexed BEFORE INSERT ON memories "
    "FOR EACH ROW EXECUTE FUNCTION memories_vector_indexed()",
    "CREATE TRIGGER trg_knowledge_vector_indexed BEFORE INSERT ON knowledge "
    "FOR EACH ROW EXECUTE FUNCTION memories_vector_indexed()",
)


def attach(metadata: MetaData) -> None:
    """Have ``metadata.create_all`` run this module's DDL: the extension before the tables, each
    table's own statements after it, functions and triggers once every table exists."""
    for statement in EXTENSIONS:
        event.listen(metadata, "before_create", DDL(statement))
    for table_name, statements in TABLE_DDL.items():
        table: Table = metadata.tables[table_name]
        for statement in statements:
            event.listen(table, "after_create", DDL(statement))
    for statement in (*FUNCTIONS, *TRIGGERS):
        event.listen(metadata, "after_create", DDL(statement))
