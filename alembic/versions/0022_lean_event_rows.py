"""events: drop ``org_id`` and ``anima_id``; an event's anima (and org) come from ``anima_key``

Since 0018 every event carries ``anima_key`` (= ``animas.key``) and one foreign key
(anima_key, anima_id, org_id) → animas (key, id, org_id) kept the three in agreement, so the two
uuids were implied by the key: 32 bytes of every event row. They go; the foreign key becomes
``anima_key → animas.key ON DELETE CASCADE`` (an anima's cascade delete still finds its events
through the anima_key indexes), and readers take the anima and org from ``animas`` (joined by key, or
the anima the request already resolved). The wire keeps ``anima_id`` on every event (derived).
``uq_animas_key_id_org`` (the old foreign key's target) and the statistics ``st_events_anima`` over
the three columns go too.

No backfill: ``DROP COLUMN`` only marks the columns dropped in the catalogue. Rows written before
this migration keep the columns' bytes until they are rewritten (an UPDATE, ``VACUUM FULL`` or
``CLUSTER``); rows written after it are 32 bytes narrower.

Downgrade adds the columns back, fills them from ``animas`` by key and restores the foreign key,
the unique constraint and the statistics.

``memory_text`` (0021's rendering of a memory's content from its events) read the events of the
memory's anima by ``anima_id``: it is replaced by the same rule reading them by the anima's key.

Revision ID: 0022
Revises: 0021
"""

from typing import Sequence, Union

from alembic import op

revision: str = "0022"
down_revision: Union[str, None] = "0021"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

# 0021's rendering rule (frozen here, as migrations freeze their constants); only which events are
# the anima's changes: by key after this revision, by anima_id before it.
_RENDER_FN = r"""
CREATE OR REPLACE FUNCTION memory_text(anima uuid, ids uuid[]) RETURNS text LANGUAGE sql STABLE PARALLEL SAFE AS $$
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
FROM events e WHERE e.id = ANY(ids) AND OWNED
$$
"""
_BY_KEY = "e.anima_key = (SELECT a.key FROM animas a WHERE a.id = anima)"
_BY_ANIMA_ID = "e.anima_id = anima"


def upgrade() -> None:
    op.execute(_RENDER_FN.replace("OWNED", _BY_KEY))
    op.execute("DROP STATISTICS st_events_anima")
    op.execute("ALTER TABLE events DROP CONSTRAINT fk_events_anima")
    op.execute("ALTER TABLE events DROP COLUMN org_id, DROP COLUMN anima_id")
    op.execute(
        "ALTER TABLE events ADD CONSTRAINT fk_events_anima FOREIGN KEY (anima_key) "
        "REFERENCES animas (key) ON DELETE CASCADE"
    )
    op.execute("ALTER TABLE animas DROP CONSTRAINT uq_animas_key_id_org")


def downgrade() -> None:
    op.execute("ALTER TABLE animas ADD CONSTRAINT uq_animas_key_id_org UNIQUE (key, id, org_id)")
    op.execute("ALTER TABLE events DROP CONSTRAINT fk_events_anima")
    op.execute("ALTER TABLE events ADD COLUMN org_id uuid, ADD COLUMN anima_id uuid")
    op.execute("UPDATE events e SET org_id = a.org_id, anima_id = a.id FROM animas a WHERE a.key = e.anima_key")
    op.execute("ALTER TABLE events ALTER COLUMN org_id SET NOT NULL, ALTER COLUMN anima_id SET NOT NULL")
    op.execute(
        "ALTER TABLE events ADD CONSTRAINT fk_events_anima FOREIGN KEY (anima_key, anima_id, org_id) "
        "REFERENCES animas (key, id, org_id) ON DELETE CASCADE"
    )
    op.execute("CREATE STATISTICS st_events_anima (dependencies) ON anima_key, anima_id, org_id FROM events")
    op.execute(_RENDER_FN.replace("OWNED", _BY_ANIMA_ID))
