"""lean small animas: the pack and full-text indexes of memories and knowledge hold large animas only

0019 (memories) and 0020 (knowledge) keep an anima's rows out of the HNSW index until the anima has
``INDEX_THRESHOLD`` live memories (``vector_indexed``, a copy of ``animas.vectors_indexed``). The
same holds for the other per-anima indexes a pack compile reads: the covering pack indexes
(``ix_memories_pack_happened`` / ``_importance`` / ``_score``, ``ix_knowledge_pack_happened`` /
``_importance``) and the full-text GINs (``ix_memories_fts``, ``ix_knowledge_fts``), and the
dreamer's ``ix_knowledge_anima_hash``. For an anima of ~100–2,000 memories, scoring every live row
once reads the same rows the pruned arms would, from the heap through the anima btree (``services/packs/topk.py``, exhaustive form), and the text arm
filters ``fts @@ q`` over them; the dreamer finds a small anima's knowledge by hash among its few
items. Each of these indexes gains ``AND vector_indexed`` (or ``WHERE vector_indexed``); a large
anima's statements AND the flag to their WHERE (``db/vectors.large_anima_filter``), so the partial
indexes still answer them.

The flag keeps its name: it now says "the anima is large, its rows are in the per-anima search
indexes", which ``vector_indexed`` still says of the HNSW ones; a rename would touch every trigger,
flip and reader of 0019/0020 for no change in behaviour.

``storage --size small`` (every anima ~100 memories), KB per conversation as left: memories' pack
indexes ~51 and full-text ~15; knowledge's pack, full-text and hash indexes ~6.

Revision ID: 0023
Revises: 0022
"""

from typing import Sequence, Union

from alembic import op

revision: str = "0023"
down_revision: Union[str, None] = "0022"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

MEMORY_LIVE = "deleted_at IS NULL AND merged_into IS NULL AND state <> 'archived'"
KNOWLEDGE_CURRENT = "deleted_at IS NULL AND valid_to IS NULL AND superseded_by IS NULL"
# Exactly elephantasm.db.models.memory_score_key(): the statements use this text.
SCORE_KEY = (
    "(greatest(0.0, least(1.0, coalesce(importance, 0.5))) + 0.4 * "
    "greatest(0.0, least(1.0, coalesce(confidence, 0.5))))"
)
# name → (table, USING and key, INCLUDE, WITH, predicate), as 0002, 0009, 0017 and 0021 left them.
INDEXES = {
    "ix_memories_pack_happened": (
        "memories",
        "btree (anima_id, coalesce(time_end, time_start))",
        "importance, confidence, time_start, time_end, created_at, id",
        "",
        MEMORY_LIVE,
    ),
    "ix_memories_pack_importance": (
        "memories",
        "btree (anima_id, importance)",
        "confidence, time_start, time_end, created_at, id",
        "",
        MEMORY_LIVE,
    ),
    "ix_memories_pack_score": (
        "memories",
        f"btree (anima_id, {SCORE_KEY})",
        "importance, confidence, time_start, time_end, id",
        "",
        MEMORY_LIVE,
    ),
    "ix_memories_fts": ("memories", "gin (fts)", "", "fastupdate = off", ""),
    "ix_knowledge_pack_happened": (
        "knowledge",
        "btree (org_id, anima_id, coalesce(valid_from, created_at))",
        "importance, confidence, valid_from, created_at, id",
        "",
        KNOWLEDGE_CURRENT,
    ),
    "ix_knowledge_pack_importance": (
        "knowledge",
        "btree (org_id, anima_id, importance)",
        "confidence, valid_from, created_at, id",
        "",
        KNOWLEDGE_CURRENT,
    ),
    "ix_knowledge_fts": ("knowledge", "gin (fts)", "", "fastupdate = off", ""),
    # The dreamer's lookup of current items by content hash; a small anima's few items are read
    # through ix_knowledge_anima_subject's anima prefix instead.
    "ix_knowledge_anima_hash": ("knowledge", "btree (anima_id, content_hash)", "", "", ""),
}


def _rebuild(large_only: bool) -> None:
    for name, (table, key, include, with_, where) in INDEXES.items():
        predicate = " AND ".join(p for p in (where, "vector_indexed" if large_only else "") if p)
        op.execute(f"DROP INDEX {name}")
        op.execute(
            f"CREATE INDEX {name} ON {table} USING {key}"
            + (f" INCLUDE ({include})" if include else "")
            + (f" WITH ({with_})" if with_ else "")
            + (f" WHERE {predicate}" if predicate else "")
        )


def upgrade() -> None:
    _rebuild(large_only=True)


def downgrade() -> None:
    _rebuild(large_only=False)
