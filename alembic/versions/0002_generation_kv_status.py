"""generations.kv_status holds every KV outcome, ``recomputed`` included (was 8 characters).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-28
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE generations ALTER COLUMN kv_status TYPE character varying(16)")


def downgrade() -> None:
    # The narrower column records a restore that did not reuse as the miss it amounted to.
    op.execute("UPDATE generations SET kv_status = 'miss' WHERE length(kv_status) > 8")
    op.execute("ALTER TABLE generations ALTER COLUMN kv_status TYPE character varying(8)")
