"""dream_actions: one row per batch of journal entries instead of one row per entry

A dream step journals ~100 similar entries at once (one per memory it created). One row per entry
cost ~240 bytes, ~130 of them the row's own id, org, anima, run, labels, timestamp and header, plus a
pkey entry: 34 KB per conversation (benchmarks/RESULTS.md, issue 13). A row now holds a run of
consecutive entries of one step with the same action and target type: ``target_ids uuid[]`` and the
entries' before/after values as jsonb arrays (``befores``/``afters``; null when every entry's is
None). Entry ids derive from the row id and the position (``services/dreams/journal_rows``);
converted rows keep their entries' original ids in ``entry_ids``.

The arrays are ``STORAGE MAIN`` and the table's ``toast_tuple_target`` is 128 bytes, so a batch is
compressed inline (pglz: a step's ~100 "created" entries of uuid7 targets compress ~2:1) rather than
left raw or moved out of line. Measured (storage --size small): dream_actions 34 → 9 KB per
conversation (32 → 6 at --size full); the two settings alone give ~1 % of the journal's bytes over
the defaults, where the big rows compress anyway, and keep a large step's row in the heap. lz4 would
need a server built with it (the embedded one is not), so the compression stays the default.

Upgrade converts every entry (grouped as the writer groups them, so the readers' order
``created_at, action, id`` is unchanged); downgrade restores one row per entry with the same ids.

Revision ID: 0024
Revises: 0022
"""

from typing import Sequence, Union

from alembic import op

revision: str = "0024"
down_revision: Union[str, None] = "0023"
branch_labels: Union[str, Sequence[str], None] = None
depends_on: Union[str, Sequence[str], None] = None

_KEYS = """
    org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
    anima_id uuid NOT NULL REFERENCES animas (id) ON DELETE CASCADE,
    run_id uuid NOT NULL REFERENCES dream_runs (id) ON DELETE CASCADE,"""

_BATCHED = f"""
CREATE TABLE dream_actions (
    id uuid NOT NULL,{_KEYS}
    created_at timestamptz NOT NULL DEFAULT now(),
    action varchar(32) NOT NULL,
    target_type varchar(32) NOT NULL,
    target_ids uuid[] NOT NULL,
    befores jsonb,
    afters jsonb,
    entry_ids uuid[],
    CONSTRAINT dream_actions_pkey PRIMARY KEY (id)
) WITH (toast_tuple_target = 128)"""

_STORAGE = """
ALTER TABLE dream_actions
    ALTER COLUMN target_ids SET STORAGE MAIN, ALTER COLUMN befores SET STORAGE MAIN,
    ALTER COLUMN afters SET STORAGE MAIN, ALTER COLUMN entry_ids SET STORAGE MAIN"""

_PER_ENTRY = f"""
CREATE TABLE dream_actions (
    id uuid NOT NULL,{_KEYS}
    action varchar(32) NOT NULL,
    target_type varchar(32) NOT NULL,
    target_id uuid,
    before jsonb,
    after jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT dream_actions_pkey PRIMARY KEY (id)
)"""

# A new batch starts where the target type changes within (run, step time, action), in id order:
# the readers order entries by (created_at, action, id), and a row is read in its entries' order.
_CONVERT = """
WITH marked AS (
    SELECT a.*, CASE WHEN target_type = lag(target_type) OVER w THEN 0 ELSE 1 END AS starts
    FROM dream_actions_0022 a WINDOW w AS (PARTITION BY run_id, created_at, action ORDER BY id)
), grouped AS (
    SELECT m.*, sum(starts) OVER (PARTITION BY run_id, created_at, action ORDER BY id) AS batch FROM marked m
)
INSERT INTO dream_actions (id, org_id, anima_id, run_id, created_at, action, target_type,
                           target_ids, befores, afters, entry_ids)
SELECT (array_agg(id ORDER BY id))[1], org_id, anima_id, run_id, created_at, action, target_type,
       array_agg(target_id ORDER BY id),
       CASE WHEN bool_and(coalesce(before, 'null') = 'null') THEN NULL
            ELSE jsonb_agg(coalesce(before, 'null') ORDER BY id) END,
       CASE WHEN bool_and(coalesce(after, 'null') = 'null') THEN NULL
            ELSE jsonb_agg(coalesce(after, 'null') ORDER BY id) END,
       array_agg(id ORDER BY id)
FROM grouped
GROUP BY run_id, created_at, action, batch, target_type, org_id, anima_id
"""

# An entry's id: its stored one, or the row id with the position in the low 16 bits.
_EXPAND = """
INSERT INTO dream_actions (id, org_id, anima_id, run_id, action, target_type, target_id, before, after, created_at)
SELECT coalesce(d.entry_ids[t.n],
                encode(overlay(uuid_send(d.id) PLACING substring(int4send(t.n::int - 1) FROM 3 FOR 2)
                               FROM 15 FOR 2), 'hex')::uuid),
       d.org_id, d.anima_id, d.run_id, d.action, d.target_type, t.id,
       coalesce(d.befores -> (t.n::int - 1), 'null'), coalesce(d.afters -> (t.n::int - 1), 'null'), d.created_at
FROM dream_actions_0024 d CROSS JOIN LATERAL unnest(d.target_ids) WITH ORDINALITY AS t(id, n)
"""


def _set_aside(suffix: str) -> None:
    op.execute(f"ALTER TABLE dream_actions RENAME TO dream_actions_{suffix}")
    op.execute(f"ALTER INDEX dream_actions_pkey RENAME TO dream_actions_{suffix}_pkey")
    op.execute(f"ALTER INDEX ix_dream_actions_run RENAME TO ix_dream_actions_{suffix}_run")


def _finish(suffix: str) -> None:
    op.execute(f"DROP TABLE dream_actions_{suffix}")
    op.execute("CREATE INDEX ix_dream_actions_run ON dream_actions (run_id, created_at)")


def upgrade() -> None:
    _set_aside("0022")
    op.execute(_BATCHED)
    op.execute(_STORAGE)
    op.execute(_CONVERT)
    _finish("0022")


def downgrade() -> None:
    _set_aside("0024")
    op.execute(_PER_ENTRY)
    op.execute(_EXPAND)
    _finish("0024")
