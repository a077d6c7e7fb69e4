"""events are insert-only: a per-anima event sequence and a distilled watermark replace the claim marks

Measured by ``python -m benchmarks storage`` (``benchmarks/RESULTS.md``, "issue 14 events"): the dreamer
updated every event once when it distilled it (``distilled_at``, ``claimed_by``, ``claimed_at``, and
the stored ``fts`` kept only while pending), and ``distilled_at`` was in ``ix_events_pending``'s
predicate, so no update was HOT: about half of the events table as left after dreaming was dead
row versions and their index entries.

- ``events.seq``: the event's place in its anima's sequence, handed out from ``animas.event_seq``
  under the anima's row lock by every insert path, so seqs are in commit order. Unique per anima.
- ``animas.distilled_seq``: the watermark. An event is pending while ``seq > distilled_seq``; a run
  distils the lowest pending seqs and moves the watermark in the chunk's write transaction.
- ``dream_chunks``: one row per chunk, the seq range it took, claimed (``distilled_at`` NULL) or
  distilled. An event's ``distilled_at`` is its distilled chunk's.
- ``dream_runs.until_seq``: the anima's ``event_seq`` when the run started (later events wait).
- ``events.fts`` is stored for every event (it can no longer be dropped once distilled without
  rewriting the row; a virtual column cost ~5 ms per compile with 200 pending events);
  ``ix_events_pending``, ``distilled_at``, ``claimed_by`` and ``claimed_at`` go.

Conversion: each anima's distilled events get seqs 1..d ordered by (distilled_at, created_at,
occurred_at, id), its pending ones (claimed or not) d+1..n by (created_at, occurred_at, id);
``distilled_seq`` = d, ``event_seq`` = n, and one distilled chunk per (anima, distilled_at).

Revision ID: 0011
Revises: 0010
"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: Union[str, None] = "0010"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

_TEXT = "to_tsvector('english', coalesce(summary, '') || ' ' || content)"
_PENDING_FTS = f"CASE WHEN distilled_at IS NULL THEN {_TEXT} ELSE NULL END"


def _bigint(table: str, name: str, nullable: bool = False) -> None:
    default = None if nullable else sa.text("0")
    op.add_column(table, sa.Column(name, sa.BigInteger(), nullable=nullable, server_default=default))


def _create_chunks() -> None:
    op.create_table(
        "dream_chunks",
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("org_id", sa.UUID(), nullable=False),
        sa.Column("anima_id", sa.UUID(), nullable=False),
        sa.Column("run_id", sa.UUID(), nullable=True),
        sa.Column("first_seq", sa.BigInteger(), nullable=False),
        sa.Column("last_seq", sa.BigInteger(), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("distilled_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("first_seq <= last_seq", name="ck_dream_chunks_range"),
        sa.ForeignKeyConstraint(["anima_id"], ["animas.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["org_id"], ["orgs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("anima_id", "last_seq", name="uq_dream_chunks_anima_last"),
    )
    op.create_index(
        "ix_dream_chunks_claims", "dream_chunks", ["run_id"], postgresql_where=sa.text("distilled_at IS NULL")
    )


def _convert() -> None:
    op.execute("""
        UPDATE events e SET seq = o.seq
        FROM (SELECT id, row_number() OVER (
                PARTITION BY anima_id
                ORDER BY distilled_at IS NULL, distilled_at, created_at, occurred_at, id) AS seq
              FROM events) o
        WHERE e.id = o.id
    """)
    op.execute("""
        INSERT INTO dream_chunks (id, org_id, anima_id, run_id, first_seq, last_seq, claimed_at, distilled_at)
        SELECT gen_random_uuid(), org_id, anima_id, (array_agg(claimed_by ORDER BY seq))[1], min(seq), max(seq),
               coalesce(min(claimed_at), distilled_at), distilled_at
        FROM events WHERE distilled_at IS NOT NULL
        GROUP BY org_id, anima_id, distilled_at
    """)
    op.execute("""
        UPDATE animas a SET event_seq = s.total, distilled_seq = s.distilled
        FROM (SELECT anima_id, count(*) AS total, count(distilled_at) AS distilled FROM events GROUP BY anima_id) s
        WHERE a.id = s.anima_id
    """)


def upgrade() -> None:
    _bigint("animas", "event_seq")
    _bigint("animas", "distilled_seq")
    _bigint("dream_runs", "until_seq", nullable=True)
    _create_chunks()
    _bigint("events", "seq", nullable=True)
    _convert()
    op.alter_column("events", "seq", nullable=False)
    op.create_unique_constraint("uq_events_anima_seq", "events", ["anima_id", "seq"])
    op.drop_index("ix_events_pending", table_name="events", postgresql_where=sa.text("distilled_at IS NULL"))
    op.drop_column("events", "fts")
    for name in ("distilled_at", "claimed_by", "claimed_at"):
        op.drop_column("events", name)
    op.execute(f"ALTER TABLE events ADD COLUMN fts tsvector GENERATED ALWAYS AS ({_TEXT}) STORED")


def downgrade() -> None:
    op.drop_column("events", "fts")
    op.add_column("events", sa.Column("distilled_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("events", sa.Column("claimed_by", sa.UUID(), nullable=True))
    op.add_column("events", sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True))
    op.execute("""
        UPDATE events e SET distilled_at = c.distilled_at, claimed_by = c.run_id, claimed_at = c.claimed_at
        FROM dream_chunks c
        WHERE c.anima_id = e.anima_id AND e.seq BETWEEN c.first_seq AND c.last_seq
    """)
    op.execute(f"ALTER TABLE events ADD COLUMN fts tsvector GENERATED ALWAYS AS ({_PENDING_FTS}) STORED")
    op.create_index(
        "ix_events_pending", "events", ["anima_id", "occurred_at"], postgresql_where=sa.text("distilled_at IS NULL")
    )
    op.drop_constraint("uq_events_anima_seq", "events", type_="unique")
    op.drop_column("events", "seq")
    op.drop_index("ix_dream_chunks_claims", table_name="dream_chunks", postgresql_where=sa.text("distilled_at IS NULL"))
    op.drop_table("dream_chunks")
    op.drop_column("dream_runs", "until_seq")
    op.drop_column("animas", "distilled_seq")
    op.drop_column("animas", "event_seq")
