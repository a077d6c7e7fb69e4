"""Dream back-off state on animas, and repair of event times outside the accepted window.

``animas.dream_status/dream_failures/dream_retry_at``: a run that keeps failing for one anima backs
off exponentially, then parks the anima as ``failed`` (visible on the anima) instead of being
retried by every sweep forever.

Repair: events recorded before the API enforced the ``occurred_at`` window (1900-01-01 to one day
after recording; ``-infinity`` and year-9999 values poisoned the dreamer and the current session)
get ``occurred_at = created_at``; the original text is kept in ``meta.original_occurred_at``. The
animas concerned get ``last_event_at`` recomputed and a ``state_version`` bump.

Revision ID: 0006
Revises: 0003
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: Union[str, None] = "0005"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

_OUT_OF_WINDOW = (
    "(NOT isfinite(occurred_at) OR occurred_at < TIMESTAMPTZ '1900-01-01 00:00:00+00' "
    "OR occurred_at > created_at + INTERVAL '1 day')"
)


def upgrade() -> None:
    op.add_column("animas", sa.Column("dream_status", sa.String(16), nullable=False, server_default="ok"))
    op.add_column("animas", sa.Column("dream_failures", sa.Integer(), nullable=False, server_default=sa.text("0")))
    op.add_column("animas", sa.Column("dream_retry_at", sa.DateTime(timezone=True), nullable=True))
    # Three statements: a data-modifying CTE's changes are invisible to the rest of its statement.
    op.execute(f"""
        UPDATE animas SET last_event_at = NULL, state_version = state_version + 1
        WHERE id IN (SELECT anima_id FROM events WHERE {_OUT_OF_WINDOW})
    """)
    op.execute(f"""
        UPDATE events
        SET meta = meta || jsonb_build_object('original_occurred_at', occurred_at::text), occurred_at = created_at
        WHERE {_OUT_OF_WINDOW}
    """)
    op.execute("""
        UPDATE animas a SET last_event_at = (SELECT max(e.occurred_at) FROM events e WHERE e.anima_id = a.id)
        WHERE a.last_event_at IS NULL AND EXISTS (SELECT 1 FROM events e WHERE e.anima_id = a.id)
    """)


def downgrade() -> None:
    # The repaired times stay repaired (their originals are in meta); only the columns go.
    op.drop_column("animas", "dream_retry_at")
    op.drop_column("animas", "dream_failures")
    op.drop_column("animas", "dream_status")
