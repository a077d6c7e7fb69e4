"""memories render their content from their events instead of storing a copy of it

An offline-distilled memory's ``content`` is exactly the ``"speaker: text"`` lines of its events in
time order: a second copy of text the events table already holds (~337 B a memory). From here such a
memory stores ``content`` NULL and ``content_rendered`` true, and every reader renders it with the
SQL function ``memory_text(anima_id, event_ids)`` — the one place the rendering rule lives (its
Python twin is ``domain.dreaming.offline.memory_from_group``).

Who decides: the BEFORE INSERT trigger ``trg_memories_text``. It renders the new row's events and
stores NULL + the flag only when the rendering equals the given content byte for byte, so a writer
never has to know (an LLM engine's wording, an import whose events differ, a content the rule cannot
reproduce: all stay stored). Events are never edited and leave only with their anima, so a rendering
cannot drift. The same trigger keeps the row honest on updates: a new content clears the flag, a
row whose ``event_ids`` change (a merge: the union of its members') first stores the text it had,
and a deleted row renders nothing.

``fts`` stops being a generated column (a generated column cannot read another table): the trigger
writes it from the full text, as the generation expression did, so search and packs rank the same.

Upgrade keeps existing rows' stored content (no backfill). Downgrade stores every rendered content
again and makes ``fts`` generated once more.

Revision ID: 0021
Revises: 0020
"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: Union[str, None] = "0020"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

# domain.dreaming.text.speaker (author, else the role's label, else the event type's label) and
# grouping.event_text (content, else summary, else ''), joined as offline.memory_from_group joins
# them: one line per event in (occurred_at, id) order, separated by newlines. Only the memory's own
# anima's events are read.
RENDER_FN = r"""
CREATE FUNCTION memory_text(anima uuid, ids uuid[]) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
SELECT string_agg(
    coalesce(
        nullif(e.author, ''),
        CASE lower(e.role) WHEN 'user' THEN 'User' WHEN 'human' THEN 'User' WHEN 'assistant' THEN 'Assistant'
            WHEN 'ai' THEN 'Assistant' WHEN 'system' THEN 'System' WHEN 'tool' THEN 'Tool'
            ELSE nullif(e.role, '') END,
        CASE e.event_type WHEN 'message.in' THEN 'User' WHEN 'message.out' THEN 'Assistant'
            WHEN 'tool.call' THEN 'Tool call' WHEN 'tool.result' THEN 'Tool result' WHEN 'system' THEN 'System'
            ELSE e.event_type END)
    || ': ' || coalesce(nullif(e.content, ''), nullif(e.summary, ''), ''),
    E'\n' ORDER BY e.occurred_at, e.id)
FROM events e WHERE e.id = ANY(ids) AND e.anima_id = anima
$$
"""
TRIGGER_FN = """
CREATE FUNCTION memories_text() RETURNS trigger LANGUAGE plpgsql AS $$
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
END $$
"""
TRIGGER = (
    "CREATE TRIGGER trg_memories_text BEFORE INSERT OR UPDATE OF summary, content, content_rendered, event_ids, "
    "deleted_at ON memories FOR EACH ROW EXECUTE FUNCTION memories_text()"
)
FTS_EXPRESSION = "strip(to_tsvector('english', summary || ' ' || coalesce(content, '')))"


def upgrade() -> None:
    op.add_column(
        "memories", sa.Column("content_rendered", sa.Boolean(), nullable=False, server_default=sa.text("false"))
    )
    op.execute("ALTER TABLE memories ALTER COLUMN fts DROP EXPRESSION")
    op.execute(RENDER_FN)
    op.execute(TRIGGER_FN)
    op.execute(TRIGGER)


def downgrade() -> None:
    op.execute("DROP TRIGGER trg_memories_text ON memories")
    op.execute("DROP FUNCTION memories_text()")
    op.execute("UPDATE memories SET content = memory_text(anima_id, event_ids) WHERE content_rendered")
    op.execute("DROP FUNCTION memory_text(uuid, uuid[])")
    op.drop_column("memories", "content_rendered")
    op.execute("DROP INDEX ix_memories_fts")
    op.drop_column("memories", "fts")
    op.execute(f"ALTER TABLE memories ADD COLUMN fts tsvector GENERATED ALWAYS AS ({FTS_EXPRESSION}) STORED")
    op.execute("CREATE INDEX ix_memories_fts ON memories USING gin (fts) WITH (fastupdate = off)")
