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
    r"""
CREATE FUNCTION memory_text(anima uuid, ids uuid[]) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
SELECT string_agg(
    coalesce(
        nullif(e.author, ''),
        CASE lower(e.role) WHEN 'user' THEN 'User' WHEN 'human' THEN 'User' WHEN 'assistant' THEN 'Assistant'
            WHEN 'ai' THEN 'Assistant' WHEN 'system' THEN 'System' WHEN 'tool' THEN 'Tool'
            ELSE nullif(e.role, '') END,
        CASE e.event_type::text WHEN 'message.in' THEN 'User' WHEN 'message.out' THEN 'Assistant'
            WHEN 'tool.call' THEN 'Tool call' WHEN 'tool.result' THEN 'Tool result' WHEN 'system' THEN 'System'
            ELSE e.event_type::text END)
    || ': ' || coalesce(nullif(e.content, ''), nullif(e.summary, ''), ''),
    E'\n' ORDER BY e.occurred_at, e.id)
FROM events e WHERE e.id = ANY(ids) AND e.anima_key = (SELECT a.key FROM animas a WHERE a.id = anima)
$$""",
    r"""
CREATE FUNCTION memories_text() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    full_text text;
BEGIN
    IF TG_OP = 'INSERT' THEN
        -- memory_text is NULL when none of the events is found: then it is stored.
        NEW.content_rendered := coalesce(NEW.content IS NOT NULL AND NEW.summary <> '' AND NEW.deleted_at IS NULL
            AND cardinality(NEW.event_ids) > 0 AND NEW.content = memory_text(NEW.anima_id, NEW.event_ids), false);
    ELSIF NOT OLD.content_rendered THEN
        NEW.content_rendered := false;  -- only an insert decides that a row renders
    ELSIF NEW.content_rendered THEN
        IF NEW.content IS NOT NULL THEN
            NEW.content_rendered := false;  -- a new text was written: it is stored
        ELSIF NEW.event_ids IS DISTINCT FROM OLD.event_ids THEN
            NEW.content := memory_text(OLD.anima_id, OLD.event_ids);  -- a merge: keep the text it had
            NEW.content_rendered := false;
        END IF;
    END IF;
    IF NEW.deleted_at IS NOT NULL THEN
        NEW.content_rendered := false;  -- a forgotten row renders nothing
    END IF;
    IF NEW.content_rendered THEN
        full_text := coalesce(NEW.content, memory_text(NEW.anima_id, NEW.event_ids), '');
        NEW.content := NULL;
    ELSE
        full_text := coalesce(NEW.content, '');
    END IF;
    NEW.fts := strip(to_tsvector('english', NEW.summary || ' ' || full_text));
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
    "CREATE TRIGGER trg_memories_text BEFORE INSERT OR UPDATE OF summary, content, content_rendered, event_ids, "
    "deleted_at ON memories FOR EACH ROW EXECUTE FUNCTION memories_text()",
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
