"""KV snapshots of pack prefixes and recorded local-model generations (model-level memory).

``kv_snapshots``: one row per KV state file in the snapshot store (content addressed by
``sha256``), keyed per anima by ``snapshot_key`` (model digest, chat template, prefix, KV type).
``generations``: every local-model generation with seed, sampling, prompt and output, for replay.

Revision ID: 0004
Revises: 0003
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0004"
down_revision: Union[str, None] = "0003"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def _owner_columns() -> list[sa.Column]:
    return [
        sa.Column("id", sa.UUID(), nullable=False),
        sa.Column("org_id", sa.UUID(), sa.ForeignKey("orgs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("anima_id", sa.UUID(), sa.ForeignKey("animas.id", ondelete="CASCADE"), nullable=False),
    ]


def _jsonb(name: str) -> sa.Column:
    return sa.Column(name, postgresql.JSONB(astext_type=sa.Text()), server_default=sa.text("'{}'::jsonb"),
                     nullable=False)


def _now(name: str) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False)


def upgrade() -> None:
    op.create_table(
        "kv_snapshots",
        *_owner_columns(),
        sa.Column("snapshot_key", sa.String(length=64), nullable=False),
        sa.Column("pack_fingerprint", sa.String(length=64), nullable=False),
        sa.Column("model_digest", sa.String(length=64), nullable=False),
        sa.Column("model_name", sa.String(length=200), nullable=False),
        sa.Column("llama_cpp_version", sa.String(length=32), nullable=False),
        sa.Column("kv_type", sa.String(length=16), nullable=False),
        sa.Column("n_ctx", sa.Integer(), nullable=False),
        sa.Column("n_tokens", sa.Integer(), nullable=False),
        sa.Column("token_ids_hash", sa.String(length=64), nullable=False),
        sa.Column("bytes", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("source", sa.String(length=16), server_default=sa.text("'built'"), nullable=False),
        _jsonb("meta"),
        _now("created_at"),
        _now("last_used_at"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("anima_id", "snapshot_key", name="uq_kv_snapshots_anima_key"),
    )
    op.create_index("ix_kv_snapshots_org_anima", "kv_snapshots", ["org_id", "anima_id"])
    op.create_index("ix_kv_snapshots_last_used", "kv_snapshots", ["last_used_at"])
    op.create_table(
        "generations",
        *_owner_columns(),
        sa.Column("model_digest", sa.String(length=64), nullable=False),
        sa.Column("pack_fingerprint", sa.String(length=64), nullable=True),
        sa.Column("kv_status", sa.String(length=8), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        _jsonb("sampling"),
        sa.Column("prompt_hash", sa.String(length=64), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        _jsonb("prompt"),
        sa.Column("output", sa.Text(), nullable=False),
        sa.Column("output_tokens", sa.Integer(), nullable=False),
        sa.Column("finish_reason", sa.String(length=16), nullable=False),
        _now("created_at"),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index("ix_generations_org_anima_created", "generations", ["org_id", "anima_id", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_generations_org_anima_created", table_name="generations")
    op.drop_table("generations")
    op.drop_index("ix_kv_snapshots_last_used", table_name="kv_snapshots")
    op.drop_index("ix_kv_snapshots_org_anima", table_name="kv_snapshots")
    op.drop_table("kv_snapshots")
