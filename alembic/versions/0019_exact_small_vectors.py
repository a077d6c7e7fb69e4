"""exact vector search for small animas: memories enter the HNSW index only once their anima is large

``animas.vectors_indexed`` (false until the anima's live memories reach
``elephantasm.db.vectors.INDEX_THRESHOLD``; never reset) and ``memories.vector_indexed`` (a copy of
it, set by a BEFORE INSERT trigger from the anima row, and for all of an anima's rows at once when
the dreamer flips the anima: ``services/dreams/vector_flag.py``). The memories' HNSW partial indexes
hold only ``vector_indexed`` rows; a reader of a small anima scans its few rows exactly through an
anima-keyed btree instead (better recall, and no ~830 B of graph per memory).

Every insert path (dreamer, merges, import, COPY) goes through the trigger. It reads the anima row
without a lock (a share lock would let two writers that later bump the anima's state_version
deadlock): memories are inserted into an existing anima only by its dreamer, one run at a time (an
import makes a new anima), so no insert races the flip.

Upgrade flags animas already at the threshold and their memories, and rebuilds the HNSW indexes
with the new predicate; downgrade drops both and rebuilds them over every row.

Revision ID: 0019
Revises: 0018
"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: Union[str, None] = "0018"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

# Copies of elephantasm.db.vectors.INDEX_THRESHOLD / INDEXED_DIMS and the HNSW parameters at 0019.
THRESHOLD = 2000
DIMS = (256, 384)
HNSW_WITH = "(m = 16, ef_construction = 40)"
LIVE = "deleted_at IS NULL AND merged_into IS NULL"

TRIGGER_FN = """
CREATE FUNCTION memories_vector_indexed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.vector_indexed := coalesce(
        (SELECT a.vectors_indexed FROM animas a WHERE a.id = NEW.anima_id), false);
    RETURN NEW;
END $$
"""
TRIGGER = (
    "CREATE TRIGGER trg_memories_vector_indexed BEFORE INSERT ON memories "
    "FOR EACH ROW EXECUTE FUNCTION memories_vector_indexed()"
)


def _hnsw(tables: tuple[str, ...], extra: str) -> None:
    for table in tables:
        for dim in DIMS:
            name = f"ix_{table}_embedding_hnsw{dim}"
            op.execute(f"DROP INDEX IF EXISTS {name}")
            op.execute(
                f"CREATE INDEX {name} ON {table} USING hnsw ((embedding::halfvec({dim})) halfvec_cosine_ops) "
                f"WITH {HNSW_WITH} WHERE vector_dims(embedding) = {dim}{extra}"
            )


def upgrade() -> None:
    op.add_column(
        "animas", sa.Column("vectors_indexed", sa.Boolean(), nullable=False, server_default=sa.text("false"))
    )
    op.add_column(
        "memories", sa.Column("vector_indexed", sa.Boolean(), nullable=False, server_default=sa.text("false"))
    )
    op.execute(TRIGGER_FN)
    op.execute(TRIGGER)
    op.execute(
        f"UPDATE animas a SET vectors_indexed = true WHERE (SELECT count(*) FROM (SELECT 1 FROM memories m "
        f"WHERE m.anima_id = a.id AND m.{LIVE.replace(' AND ', ' AND m.')} LIMIT {THRESHOLD}) x) >= {THRESHOLD}"
    )
    op.execute(
        "UPDATE memories m SET vector_indexed = true FROM animas a WHERE a.id = m.anima_id AND a.vectors_indexed"
    )
    _hnsw(("memories",), " AND vector_indexed")


def downgrade() -> None:
    _hnsw(("memories",), "")
    op.execute("DROP TRIGGER trg_memories_vector_indexed ON memories")
    op.execute("DROP FUNCTION memories_vector_indexed()")
    op.drop_column("memories", "vector_indexed")
    op.drop_column("animas", "vectors_indexed")
