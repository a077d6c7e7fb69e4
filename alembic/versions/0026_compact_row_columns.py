"""events: ``event_type`` as an enum, ``meta`` NULL for ``{}``; memories, knowledge: compact meta and space

Per-row bytes of the widest tables (issue 13):

- ``event_type`` was ``varchar(32)``: 11–12 stored bytes ('message.in' plus its header) on every
  row for one of five values. An enum (``event_type``, the five values of
  ``domain.enums.EventType`` in that order) stores 4. asyncpg reads an enum as its label and binds a
  label to it, so readers, the wire and the filters see the same strings; an unknown type is still
  refused before the database (the wire schemas), and a label the enum lacks cannot be stored.
- ``events.meta`` was ``jsonb NOT NULL DEFAULT '{}'``: 5 bytes on every row, and nearly every event has
  no meta. NULL now means ``{}``: writers store ``NULLIF(meta, '{}')`` and readers answer
  ``coalesce(meta, '{}')`` (the ORM through ``db.models.EmptyAsNullJsonb``), so the wire is
  byte-identical.
- ``memories.meta`` was ``{"engine": "offline"}`` (~30 bytes) on every memory the offline engine
  writes. NULL now means that object (``db.models.MEMORY_META``): the ORM and the bulk insert store
  it as NULL and read it back; curation's raw updates start from ``coalesce(meta, …)``. ``{}`` (an
  API memory without meta) stays ``{}``; the column keeps its default ``'{}'``.
- ``embedding_space`` (memories, knowledge) was the embedder's label, ~38 bytes on every row with a
  vector. A new table ``embedding_spaces (id smallint identity, label text unique)`` holds each
  label once and the rows store its 2-byte code (``services.spaces`` resolves the server's label
  once per process, registering it on first sight). The existing labels are registered and
  converted here; ``ix_*_embedding_space`` are rebuilt by the type change.

One ``ALTER TABLE`` per table rewrites it once, converting the stored rows. ``memory_text`` (0021's
rendering, by key since 0022) compared ``event_type`` with text and returned it as text in its
``ELSE``: with an enum operand that branch would make the whole ``CASE`` an enum, so it reads
``event_type::text`` now (same output).

Downgrade turns them back (the object for NULL meta, the label as text) and restores the function.

Revision ID: 0026
Revises: 0022
"""

from typing import Sequence, Union

from alembic import op

revision: str = "0026"
down_revision: Union[str, None] = "0025"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

# Frozen here, as migrations freeze their constants (domain.enums.EventType at this revision).
EVENT_TYPES = ("message.in", "message.out", "tool.call", "tool.result", "system")
OFFLINE_META = """'{"engine": "offline"}'::jsonb"""  # domain.dreaming.offline.OFFLINE_META
# ALTER … USING takes no subquery: these look the code (label) up. Session-local (pg_temp).
_CODE_FN = "CREATE FUNCTION pg_temp.space_code(text) RETURNS smallint LANGUAGE sql STABLE AS " \
    "'SELECT id FROM embedding_spaces WHERE label = $1'"
_LABEL_FN = "CREATE FUNCTION pg_temp.space_label(smallint) RETURNS text LANGUAGE sql STABLE AS " \
    "'SELECT label FROM embedding_spaces WHERE id = $1'"
_SPACE_TO_CODE = "ALTER COLUMN embedding_space TYPE smallint USING pg_temp.space_code(embedding_space)"
_SPACE_TO_LABEL = "ALTER COLUMN embedding_space TYPE varchar(200) USING pg_temp.space_label(embedding_space)"

# 0022's rendering rule; only how the event's type is read differs (TYPE).
_RENDER_FN = r"""
CREATE OR REPLACE FUNCTION memory_text(anima uuid, ids uuid[]) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
SELECT string_agg(
    coalesce(
        nullif(e.author, ''),
        CASE lower(e.role) WHEN 'user' THEN 'User' WHEN 'human' THEN 'User' WHEN 'assistant' THEN 'Assistant'
            WHEN 'ai' THEN 'Assistant' WHEN 'system' THEN 'System' WHEN 'tool' THEN 'Tool'
            ELSE nullif(e.role, '') END,
        CASE TYPE WHEN 'message.in' THEN 'User' WHEN 'message.out' THEN 'Assistant'
            WHEN 'tool.call' THEN 'Tool call' WHEN 'tool.result' THEN 'Tool result' WHEN 'system' THEN 'System'
            ELSE TYPE END)
    || ': ' || coalesce(nullif(e.content, ''), nullif(e.summary, ''), ''),
    E'\n' ORDER BY e.occurred_at, e.id)
FROM events e WHERE e.id = ANY(ids) AND e.anima_key = (SELECT a.key FROM animas a WHERE a.id = anima)
$$
"""


def upgrade() -> None:
    labels = ", ".join(f"'{t}'" for t in EVENT_TYPES)
    op.execute(f"CREATE TYPE event_type AS ENUM ({labels})")
    op.execute(
        "ALTER TABLE events ALTER COLUMN event_type TYPE event_type USING event_type::event_type, "
        "ALTER COLUMN meta DROP DEFAULT, ALTER COLUMN meta DROP NOT NULL, "
        "ALTER COLUMN meta TYPE jsonb USING nullif(meta, '{}'::jsonb)"
    )
    op.execute(_RENDER_FN.replace("TYPE", "e.event_type::text"))
    op.execute(
        "CREATE TABLE embedding_spaces (id smallint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, "
        "label text NOT NULL UNIQUE)"
    )
    op.execute(
        "INSERT INTO embedding_spaces (label) SELECT embedding_space FROM memories WHERE embedding_space IS NOT NULL "
        "UNION SELECT embedding_space FROM knowledge WHERE embedding_space IS NOT NULL ORDER BY 1"
    )
    op.execute(_CODE_FN)
    op.execute(
        "ALTER TABLE memories ALTER COLUMN meta DROP NOT NULL, "
        f"ALTER COLUMN meta TYPE jsonb USING nullif(meta, {OFFLINE_META}), {_SPACE_TO_CODE}"
    )
    op.execute(f"ALTER TABLE knowledge {_SPACE_TO_CODE}")
    op.execute("DROP FUNCTION pg_temp.space_code(text)")


def downgrade() -> None:
    op.execute(_LABEL_FN)
    op.execute(
        f"ALTER TABLE memories ALTER COLUMN meta TYPE jsonb USING coalesce(meta, {OFFLINE_META}), "
        f"ALTER COLUMN meta SET NOT NULL, {_SPACE_TO_LABEL}"
    )
    op.execute(f"ALTER TABLE knowledge {_SPACE_TO_LABEL}")
    op.execute("DROP FUNCTION pg_temp.space_label(smallint)")
    op.execute("DROP TABLE embedding_spaces")
    # The column first: the old body, checked at creation, would not parse over an enum.
    op.execute(
        "ALTER TABLE events ALTER COLUMN event_type TYPE varchar(32) USING event_type::text, "
        "ALTER COLUMN meta TYPE jsonb USING coalesce(meta, '{}'::jsonb), "
        "ALTER COLUMN meta SET DEFAULT '{}'::jsonb, ALTER COLUMN meta SET NOT NULL"
    )
    op.execute(_RENDER_FN.replace("TYPE", "e.event_type"))
    op.execute("DROP TYPE event_type")
