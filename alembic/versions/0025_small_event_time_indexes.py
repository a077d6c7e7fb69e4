"""events: the time and session indexes hold only the events of animas with many of them

``animas.events_indexed`` (false until the anima's ``event_seq`` reaches
``elephantasm.db.event_index.INDEX_THRESHOLD``; never reset) and ``events.time_indexed`` (true for
the events of such an anima, NULL otherwise: a NULL costs no bytes in the row, a boolean 8 of
alignment). ``ix_events_anima_occurred`` and ``ix_events_anima_session`` become partial
``WHERE time_indexed``: a small anima's readers read its rows through ``uq_events_anima_seq`` and
sort them (elephantasm/db/event_index.py). The insert paths set the flag from the anima row they
lock and flip an anima in the transaction that takes it over the threshold.

Upgrade flags the animas already at the threshold and their events, and rebuilds the two indexes
with the predicate; downgrade rebuilds them over every row and drops both columns.

Revision ID: 0025
Revises: 0022
"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0025"
down_revision: Union[str, None] = "0024"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

# A copy of elephantasm.db.event_index.INDEX_THRESHOLD at 0025.
THRESHOLD = 1000
INDEXES = {
    "ix_events_anima_occurred": "(anima_key, occurred_at)",
    "ix_events_anima_session": "(anima_key, session_id, occurred_at)",
}


def _indexes(where: str) -> None:
    for name, columns in INDEXES.items():
        op.execute(f"DROP INDEX {name}")
        op.execute(f"CREATE INDEX {name} ON events {columns}{where}")


def upgrade() -> None:
    op.add_column("animas", sa.Column("events_indexed", sa.Boolean(), nullable=False, server_default=sa.text("false")))
    op.add_column("events", sa.Column("time_indexed", sa.Boolean(), nullable=True))
    op.execute(f"UPDATE animas SET events_indexed = true WHERE event_seq >= {THRESHOLD}")
    op.execute("UPDATE events e SET time_indexed = true FROM animas a WHERE a.key = e.anima_key AND a.events_indexed")
    _indexes(" WHERE time_indexed")


def downgrade() -> None:
    _indexes("")
    op.drop_column("events", "time_indexed")
    op.drop_column("animas", "events_indexed")
