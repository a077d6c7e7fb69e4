"""lean rows: knowledge enters the HNSW index only for large animas, as memories do since 0019

``knowledge.vector_indexed``: a copy of the anima's ``vectors_indexed``, set at insert by the
trigger ``trg_knowledge_vector_indexed`` (the function of 0019's memories trigger: it reads only
``NEW.anima_id``) and for all of an anima's rows when the dreamer flips the anima
(``services/dreams/vector_flag.py``). The knowledge HNSW partial indexes hold only those rows; a
small anima's knowledge is scanned exactly through an anima-keyed btree (its ~10 items per
conversation cost ~800 B of graph each).

Upgrade flags the knowledge of animas already flipped and rebuilds the HNSW indexes with the new
predicate; downgrade rebuilds them over every row and drops the column and the trigger.

Revision ID: 0020
Revises: 0019
"""

from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: Union[str, None] = "0019"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

# Copies of elephantasm.db.vectors.INDEXED_DIMS and the HNSW parameters at 0020.
DIMS = (256, 384)
HNSW_WITH = "(m = 16, ef_construction = 40)"

TRIGGER = (
    "CREATE TRIGGER trg_knowledge_vector_indexed BEFORE INSERT ON knowledge "
    "FOR EACH ROW EXECUTE FUNCTION memories_vector_indexed()"
)


def _knowledge_hnsw(extra: str) -> None:
    for dim in DIMS:
        name = f"ix_knowledge_embedding_hnsw{dim}"
        op.execute(f"DROP INDEX IF EXISTS {name}")
        op.execute(
            f"CREATE INDEX {name} ON knowledge USING hnsw ((embedding::halfvec({dim})) halfvec_cosine_ops) "
            f"WITH {HNSW_WITH} WHERE vector_dims(embedding) = {dim}{extra}"
        )


def upgrade() -> None:
    op.add_column(
        "knowledge", sa.Column("vector_indexed", sa.Boolean(), nullable=False, server_default=sa.text("false"))
    )
    op.execute(TRIGGER)
    op.execute(
        "UPDATE knowledge k SET vector_indexed = true FROM animas a WHERE a.id = k.anima_id AND a.vectors_indexed"
    )
    _knowledge_hnsw(" AND vector_indexed")


def downgrade() -> None:
    _knowledge_hnsw("")
    op.execute("DROP TRIGGER trg_knowledge_vector_indexed ON knowledge")
    op.drop_column("knowledge", "vector_indexed")
