"""forgetting and key scopes

- ``animas.forgotten_version``: the anima's ``state_version`` at its latest deletion of a memory or
  knowledge item. A pack compiled from an older state may contain what was deleted, so it is never
  recorded in ``memory_packs`` or ``pack_snapshots`` (``elephantasm/services/packs/store.py``).
- ``api_keys.scope`` (``admin`` > ``write`` > ``read``): what a key may do. Every existing key
  becomes ``admin``, so nothing that worked before stops working.
- ``api_keys.created_by``: the key that minted this one (NULL for keys made by the CLI or at
  bootstrap); audit only, the minted key's limits are checked when it is created.

Revision ID: 0007
Revises: 0003
"""
from typing import Sequence, Union

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: Union[str, None] = "0006"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None


def upgrade() -> None:
    op.add_column("animas", sa.Column("forgotten_version", sa.BigInteger(), nullable=False, server_default=sa.text("0")))
    op.add_column("api_keys", sa.Column("scope", sa.String(length=16), nullable=False, server_default="admin"))
    op.add_column("api_keys", sa.Column("created_by", sa.UUID(), nullable=True))
    op.create_foreign_key("fk_api_keys_created_by", "api_keys", "api_keys", ["created_by"], ["id"], ondelete="SET NULL")
    op.create_check_constraint("ck_api_keys_scope", "api_keys", "scope IN ('admin', 'write', 'read')")


def downgrade() -> None:
    op.drop_constraint("ck_api_keys_scope", "api_keys", type_="check")
    op.drop_constraint("fk_api_keys_created_by", "api_keys", type_="foreignkey")
    op.drop_column("api_keys", "created_by")
    op.drop_column("api_keys", "scope")
    op.drop_column("animas", "forgotten_version")
