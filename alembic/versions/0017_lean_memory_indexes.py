"""leaner memory indexes: drop ix_memories_anima_time_end, which no statement reads

``ix_memories_anima_time_end`` (anima_id, time_end; 0001) was ~8 KB per conversation as left after
dreaming (``storage --size small``) and one more entry to write per memory. Its one candidate
reader, the pack's session-layer statement, orders by ``time_end DESC NULLS LAST``, which an
ascending NULLS LAST index cannot give (its backward scan is DESC NULLS FIRST), and filters on
``coalesce(time_end, time_start, created_at)``, which it does not hold: that statement reads
``ix_memories_anima_session`` and sorts its few rows, with or without this index (same plan and
time, measured at 10k memories). The memory listing orders by ``coalesce(time_end, created_at)``.

Revision ID: 0017
Revises: 0016
"""

from typing import Sequence, Union

from alembic import op

revision: str = "0017"
down_revision: Union[str, None] = "0016"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.drop_index("ix_memories_anima_time_end", table_name="memories")


def downgrade() -> None:
    op.create_index("ix_memories_anima_time_end", "memories", ["anima_id", "time_end"], unique=False)
