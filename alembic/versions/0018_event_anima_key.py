"""events: key the anima-keyed indexes by a compact int8 anima key

Each anima gets ``animas.key``, a server-assigned ``bigint`` identity (unique, never reused, not on the
wire), and each event carries it as ``events.anima_key``. The four anima-keyed btree indexes of
``events`` are keyed by it instead of the anima's uuid:

- ``uq_events_anima_seq`` (anima_key, seq) and ``ix_events_anima_occurred`` (anima_key, occurred_at;
  it replaces ``ix_events_org_anima_occurred`` (org_id, anima_id, occurred_at)) have two int8-wide
  keys: 28 bytes an entry, within the width (two int8 attributes) for which Postgres splits a leaf page
  where an ascending run of inserts goes (nbtsplitloc.c, ``_bt_afternewitemoff``) instead of 50/50.
  An anima's keys only grow, but its range sits in the middle of the index (uuids are random), so
  with the uuid keys every leaf was split in half and its left half never filled again.
- ``ix_events_anima_session`` (anima_key, session_id, occurred_at) and ``uq_events_anima_dedupe``
  (anima_key, dedupe_key) are variable-width (text), so the heuristic does not apply; they are 8
  bytes an entry narrower.

The two foreign keys of ``events`` (org_id → orgs, anima_id → animas) become one,
(anima_key, anima_id, org_id) → animas (key, id, org_id) ON DELETE CASCADE: it also checks that the
key, the anima and the org of an event agree (one check per insert instead of two), and a purge's or
an org's cascade deletes an anima's events through the anima_key indexes (no index leads with
anima_id or org_id any more).

Measured (``storage --size small``, KB per conversation, indexes as left): events' indexes 161 -> 83
(anima_seq 28 -> 15, time 42 -> 15, session 42 -> 22, dedupe 35 -> 18), heap 101 -> 104 (the key).
That benchmark ingests one anima after another, so each new anima's keys also land at the right end
of the index; with the conversations' sessions interleaved across animas the indexes went 151 -> 111
(the two variable-width indexes stay about half full there: session 39 -> 34, dedupe 33 -> 26).

Downgrade restores the uuid-keyed indexes and the two foreign keys and drops both columns.

Revision ID: 0018
Revises: 0017
"""

from typing import Sequence, Union

from alembic import op

revision: str = "0018"
down_revision: Union[str, None] = "0017"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

DEDUPE_KEYED = "dedupe_key IS NOT NULL"


def _event_indexes(anima: str, time_index: tuple[str, str]) -> None:
    op.execute(f"ALTER TABLE events ADD CONSTRAINT uq_events_anima_seq UNIQUE ({anima}, seq)")
    op.execute(f"CREATE INDEX {time_index[0]} ON events ({time_index[1]}, occurred_at)")
    op.execute(f"CREATE INDEX ix_events_anima_session ON events ({anima}, session_id, occurred_at)")
    op.execute(f"CREATE UNIQUE INDEX uq_events_anima_dedupe ON events ({anima}, dedupe_key) WHERE {DEDUPE_KEYED}")


def _drop_event_indexes(time_index: str) -> None:
    op.execute("ALTER TABLE events DROP CONSTRAINT uq_events_anima_seq")
    for name in (time_index, "ix_events_anima_session", "uq_events_anima_dedupe"):
        op.execute(f"DROP INDEX {name}")


def upgrade() -> None:
    # Existing animas are numbered in the order the table holds them; new ones from the identity.
    op.execute("ALTER TABLE animas ADD COLUMN key bigint GENERATED ALWAYS AS IDENTITY")
    op.execute("ALTER TABLE animas ADD CONSTRAINT uq_animas_key UNIQUE (key)")
    op.execute("ALTER TABLE animas ADD CONSTRAINT uq_animas_key_id_org UNIQUE (key, id, org_id)")
    op.execute("ALTER TABLE events ADD COLUMN anima_key bigint")
    op.execute("UPDATE events e SET anima_key = a.key FROM animas a WHERE a.id = e.anima_id")
    op.execute("ALTER TABLE events ALTER COLUMN anima_key SET NOT NULL")
    _drop_event_indexes("ix_events_org_anima_occurred")
    op.execute("ALTER TABLE events DROP CONSTRAINT events_anima_id_fkey, DROP CONSTRAINT events_org_id_fkey")
    op.execute(
        "ALTER TABLE events ADD CONSTRAINT fk_events_anima FOREIGN KEY (anima_key, anima_id, org_id) "
        "REFERENCES animas (key, id, org_id) ON DELETE CASCADE"
    )
    _event_indexes("anima_key", ("ix_events_anima_occurred", "anima_key"))
    # Readers name the key and the anima (and org) together; without these statistics the planner
    # multiplies their selectivities and takes an anima's 50,000 events for a few thousand.
    op.execute("CREATE STATISTICS st_events_anima (dependencies) ON anima_key, anima_id, org_id FROM events")


def downgrade() -> None:
    op.execute("DROP STATISTICS st_events_anima")
    op.execute("ALTER TABLE events DROP CONSTRAINT fk_events_anima")
    _drop_event_indexes("ix_events_anima_occurred")
    op.execute("ALTER TABLE events DROP COLUMN anima_key")
    op.execute(
        "ALTER TABLE events ADD CONSTRAINT events_anima_id_fkey FOREIGN KEY (anima_id) "
        "REFERENCES animas (id) ON DELETE CASCADE, "
        "ADD CONSTRAINT events_org_id_fkey FOREIGN KEY (org_id) REFERENCES orgs (id) ON DELETE CASCADE"
    )
    _event_indexes("anima_id", ("ix_events_org_anima_occurred", "org_id, anima_id"))
    op.execute("ALTER TABLE animas DROP COLUMN key")
