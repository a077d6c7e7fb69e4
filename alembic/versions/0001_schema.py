"""The schema: every table, index, function and trigger Elephantasm uses.

One migration creates what 0001-0026 built during development (squashed before the first release;
see CHANGELOG.md). Later schema changes are new, additive migrations. The statements are Postgres's
own rendering of the schema (pg_dump), so the result is exactly that schema;
``tests/test_migrations.py`` checks it against the models and ``elephantasm.db.ddl``.

Revision ID: 0001
Revises:
Create Date: 2026-11-28
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCHEMA = (
    "CREATE EXTENSION IF NOT EXISTS vector",
    r"""
CREATE TYPE event_type AS ENUM (
    'message.in',
    'message.out',
    'tool.call',
    'tool.result',
    'system'
)
    """,
    r"""
CREATE TABLE animas (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    name character varying(200) NOT NULL,
    description text,
    meta jsonb DEFAULT '{}'::jsonb NOT NULL,
    user_id uuid,
    state_version bigint DEFAULT 0 NOT NULL,
    last_event_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    deleted_at timestamp with time zone,
    dream_status character varying(16) DEFAULT 'ok'::character varying NOT NULL,
    dream_failures integer DEFAULT 0 NOT NULL,
    dream_retry_at timestamp with time zone,
    forgotten_version bigint DEFAULT 0 NOT NULL,
    event_seq bigint DEFAULT 0 NOT NULL,
    distilled_seq bigint DEFAULT 0 NOT NULL,
    key bigint NOT NULL,
    vectors_indexed boolean DEFAULT false NOT NULL,
    events_indexed boolean DEFAULT false NOT NULL
)
    """,
    r"""
ALTER TABLE animas ALTER COLUMN key ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME animas_key_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
)
    """,
    r"""
CREATE TABLE api_keys (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    name character varying(200),
    prefix character varying(32) NOT NULL,
    key_hash character varying(64) NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone,
    revoked_at timestamp with time zone,
    last_used_at timestamp with time zone,
    scope character varying(16) DEFAULT 'admin'::character varying NOT NULL,
    created_by uuid,
    CONSTRAINT ck_api_keys_scope CHECK (scope IN ('admin', 'write', 'read'))
)
    """,
    r"""
CREATE TABLE dream_actions (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    anima_id uuid NOT NULL,
    run_id uuid NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    action character varying(32) NOT NULL,
    target_type character varying(32) NOT NULL,
    target_ids uuid[] NOT NULL,
    befores jsonb,
    afters jsonb
)
WITH (toast_tuple_target='128')
    """,
    "ALTER TABLE ONLY dream_actions ALTER COLUMN target_ids SET STORAGE MAIN",
    "ALTER TABLE ONLY dream_actions ALTER COLUMN befores SET STORAGE MAIN",
    "ALTER TABLE ONLY dream_actions ALTER COLUMN afters SET STORAGE MAIN",
    r"""
CREATE TABLE dream_chunks (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    anima_id uuid NOT NULL,
    run_id uuid,
    first_seq bigint NOT NULL,
    last_seq bigint NOT NULL,
    claimed_at timestamp with time zone NOT NULL,
    distilled_at timestamp with time zone,
    CONSTRAINT ck_dream_chunks_range CHECK ((first_seq <= last_seq))
)
    """,
    r"""
CREATE TABLE dream_runs (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    anima_id uuid NOT NULL,
    status character varying(16) NOT NULL,
    trigger character varying(32) NOT NULL,
    engine character varying(32) NOT NULL,
    model character varying(200),
    worker_id character varying(200),
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    heartbeat_at timestamp with time zone,
    finished_at timestamp with time zone,
    events_read integer DEFAULT 0 NOT NULL,
    memories_created integer DEFAULT 0 NOT NULL,
    knowledge_created integer DEFAULT 0 NOT NULL,
    llm_calls integer DEFAULT 0 NOT NULL,
    prompt_tokens integer DEFAULT 0 NOT NULL,
    completion_tokens integer DEFAULT 0 NOT NULL,
    counts jsonb DEFAULT '{}'::jsonb NOT NULL,
    error text,
    until_seq bigint
)
    """,
    r"""
CREATE TABLE embedding_spaces (
    id smallint NOT NULL,
    label text NOT NULL
)
    """,
    r"""
ALTER TABLE embedding_spaces ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME embedding_spaces_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
)
    """,
    r"""
CREATE TABLE events (
    id uuid NOT NULL,
    event_type event_type NOT NULL,
    role character varying(64),
    author character varying(200),
    summary text,
    content text NOT NULL,
    occurred_at timestamp with time zone DEFAULT now() NOT NULL,
    session_id character varying(200),
    meta jsonb,
    source_uri text,
    dedupe_key character varying(200),
    importance_score double precision,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    seq bigint NOT NULL,
    updated_at timestamp with time zone GENERATED ALWAYS AS (created_at),
    anima_key bigint NOT NULL,
    time_indexed boolean
)
    """,
    r"""
CREATE TABLE generations (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    anima_id uuid NOT NULL,
    model_digest character varying(64) NOT NULL,
    pack_fingerprint character varying(64),
    kv_status character varying(8) NOT NULL,
    seed bigint NOT NULL,
    sampling jsonb DEFAULT '{}'::jsonb NOT NULL,
    prompt_hash character varying(64) NOT NULL,
    prompt_tokens integer NOT NULL,
    prompt jsonb DEFAULT '{}'::jsonb NOT NULL,
    output text NOT NULL,
    output_tokens integer NOT NULL,
    finish_reason character varying(16) NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
)
    """,
    r"""
CREATE TABLE identities (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    anima_id uuid NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    personality_type character varying(100),
    communication_style text,
    self jsonb DEFAULT '{}'::jsonb NOT NULL,
    prose text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL
)
    """,
    r"""
CREATE TABLE identity_history (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    anima_id uuid NOT NULL,
    version integer NOT NULL,
    personality_type character varying(100),
    communication_style text,
    self jsonb DEFAULT '{}'::jsonb NOT NULL,
    prose text,
    reason text,
    run_id uuid,
    created_at timestamp with time zone DEFAULT now() NOT NULL
)
    """,
    r"""
CREATE TABLE knowledge (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    anima_id uuid NOT NULL,
    type character varying(16) NOT NULL,
    topic character varying(200),
    subject_key character varying(300),
    content text NOT NULL,
    summary text,
    content_hash character varying(64) NOT NULL,
    confidence double precision DEFAULT 0.5 NOT NULL,
    importance double precision DEFAULT 0.5 NOT NULL,
    valid_from timestamp with time zone,
    valid_to timestamp with time zone,
    superseded_by uuid,
    meta jsonb DEFAULT '{}'::jsonb NOT NULL,
    embedding halfvec,
    fts tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, (((COALESCE(topic, ''::character varying))::text || ' '::text) || content))) STORED,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    deleted_at timestamp with time zone,
    embedding_space smallint,
    vector_indexed boolean DEFAULT false NOT NULL
)
    """,
    r"""
CREATE TABLE knowledge_memories (
    knowledge_id uuid NOT NULL,
    memory_id uuid NOT NULL,
    org_id uuid NOT NULL,
    anima_id uuid NOT NULL
)
    """,
    r"""
CREATE TABLE kv_snapshots (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    anima_id uuid NOT NULL,
    snapshot_key character varying(64) NOT NULL,
    pack_fingerprint character varying(64) NOT NULL,
    model_digest character varying(64) NOT NULL,
    model_name character varying(200) NOT NULL,
    llama_cpp_version character varying(32) NOT NULL,
    kv_type character varying(16) NOT NULL,
    n_ctx integer NOT NULL,
    n_tokens integer NOT NULL,
    token_ids_hash character varying(64) NOT NULL,
    bytes bigint NOT NULL,
    sha256 character varying(64) NOT NULL,
    source character varying(16) DEFAULT 'built'::character varying NOT NULL,
    meta jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_used_at timestamp with time zone DEFAULT now() NOT NULL
)
    """,
    r"""
CREATE TABLE memories (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    anima_id uuid NOT NULL,
    summary text NOT NULL,
    content text,
    importance double precision DEFAULT 0.5 NOT NULL,
    confidence double precision DEFAULT 0.5 NOT NULL,
    state character varying(16) DEFAULT 'active'::character varying NOT NULL,
    session_id character varying(200),
    time_start timestamp with time zone,
    time_end timestamp with time zone,
    merged_into uuid,
    meta jsonb DEFAULT '{}'::jsonb NOT NULL,
    embedding halfvec,
    fts tsvector GENERATED ALWAYS AS (strip(to_tsvector('english'::regconfig, ((summary || ' '::text) || COALESCE(content, ''::text))))) STORED,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    deleted_at timestamp with time zone,
    embedding_space smallint,
    turn_vectors bytea,
    event_ids uuid[] DEFAULT '{}'::uuid[] NOT NULL,
    vector_indexed boolean DEFAULT false NOT NULL
)
WITH (toast_tuple_target='8160')
    """,
    r"""
CREATE TABLE memory_packs (
    id uuid NOT NULL,
    org_id uuid NOT NULL,
    anima_id uuid NOT NULL,
    query text,
    preset_name character varying(64) NOT NULL,
    session_memory_count integer NOT NULL,
    knowledge_count integer NOT NULL,
    long_term_memory_count integer NOT NULL,
    has_identity boolean NOT NULL,
    token_count integer NOT NULL,
    max_tokens integer NOT NULL,
    encoding character varying(32) NOT NULL,
    fingerprint character varying(64) NOT NULL,
    state_version bigint NOT NULL,
    content text DEFAULT '{}'::text NOT NULL,
    compiled_at timestamp with time zone DEFAULT now() NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
)
    """,
    r"""
CREATE TABLE memory_recalls (
    memory_id uuid NOT NULL,
    org_id uuid NOT NULL,
    anima_id uuid NOT NULL,
    recall_count integer DEFAULT 0 NOT NULL,
    last_recalled_at timestamp with time zone
)
WITH (fillfactor='70')
    """,
    r"""
CREATE TABLE orgs (
    id uuid NOT NULL,
    name character varying(200) NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL
)
    """,
    r"""
CREATE TABLE pack_snapshots (
    cache_key character varying(64) NOT NULL,
    org_id uuid NOT NULL,
    anima_id uuid NOT NULL,
    state_version bigint NOT NULL,
    payload jsonb DEFAULT '{}'::jsonb NOT NULL,
    hit_count integer DEFAULT 0 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_hit_at timestamp with time zone
)
    """,
    "ALTER TABLE ONLY animas ADD CONSTRAINT animas_pkey PRIMARY KEY (id)",
    "ALTER TABLE ONLY api_keys ADD CONSTRAINT api_keys_key_hash_key UNIQUE (key_hash)",
    "ALTER TABLE ONLY api_keys ADD CONSTRAINT api_keys_pkey PRIMARY KEY (id)",
    "ALTER TABLE ONLY dream_actions ADD CONSTRAINT dream_actions_pkey PRIMARY KEY (id)",
    "ALTER TABLE ONLY dream_chunks ADD CONSTRAINT dream_chunks_pkey PRIMARY KEY (id)",
    "ALTER TABLE ONLY dream_runs ADD CONSTRAINT dream_runs_pkey PRIMARY KEY (id)",
    "ALTER TABLE ONLY embedding_spaces ADD CONSTRAINT embedding_spaces_label_key UNIQUE (label)",
    "ALTER TABLE ONLY embedding_spaces ADD CONSTRAINT embedding_spaces_pkey PRIMARY KEY (id)",
    "ALTER TABLE ONLY events ADD CONSTRAINT events_pkey PRIMARY KEY (id)",
    "ALTER TABLE ONLY generations ADD CONSTRAINT generations_pkey PRIMARY KEY (id)",
    "ALTER TABLE ONLY identities ADD CONSTRAINT identities_anima_id_key UNIQUE (anima_id)",
    "ALTER TABLE ONLY identities ADD CONSTRAINT identities_pkey PRIMARY KEY (id)",
    "ALTER TABLE ONLY identity_history ADD CONSTRAINT identity_history_pkey PRIMARY KEY (id)",
    "ALTER TABLE ONLY knowledge ADD CONSTRAINT knowledge_pkey PRIMARY KEY (id)",
    "ALTER TABLE ONLY kv_snapshots ADD CONSTRAINT kv_snapshots_pkey PRIMARY KEY (id)",
    "ALTER TABLE ONLY memories ADD CONSTRAINT memories_pkey PRIMARY KEY (id)",
    "ALTER TABLE ONLY memory_packs ADD CONSTRAINT memory_packs_pkey PRIMARY KEY (id)",
    "ALTER TABLE ONLY memory_recalls ADD CONSTRAINT memory_recalls_pkey PRIMARY KEY (memory_id)",
    "ALTER TABLE ONLY orgs ADD CONSTRAINT orgs_name_key UNIQUE (name)",
    "ALTER TABLE ONLY orgs ADD CONSTRAINT orgs_pkey PRIMARY KEY (id)",
    "ALTER TABLE ONLY pack_snapshots ADD CONSTRAINT pack_snapshots_pkey PRIMARY KEY (cache_key)",
    ("ALTER TABLE ONLY knowledge_memories ADD CONSTRAINT pk_knowledge_memories PRIMARY KEY (knowledge_id, memory_id)"),
    "ALTER TABLE ONLY animas ADD CONSTRAINT uq_animas_key UNIQUE (key)",
    "ALTER TABLE ONLY dream_chunks ADD CONSTRAINT uq_dream_chunks_anima_last UNIQUE (anima_id, last_seq)",
    "ALTER TABLE ONLY events ADD CONSTRAINT uq_events_anima_seq UNIQUE (anima_key, seq)",
    "ALTER TABLE ONLY identity_history ADD CONSTRAINT uq_identity_history_version UNIQUE (anima_id, version)",
    "ALTER TABLE ONLY kv_snapshots ADD CONSTRAINT uq_kv_snapshots_anima_key UNIQUE (anima_id, snapshot_key)",
    "CREATE INDEX ix_animas_org_created ON animas USING btree (org_id, created_at, id)",
    "CREATE INDEX ix_api_keys_org_id ON api_keys USING btree (org_id)",
    "CREATE INDEX ix_dream_actions_run ON dream_actions USING btree (run_id, created_at)",
    "CREATE INDEX ix_dream_chunks_claims ON dream_chunks USING btree (run_id) WHERE (distilled_at IS NULL)",
    "CREATE INDEX ix_dream_runs_org_anima_started ON dream_runs USING btree (org_id, anima_id, started_at)",
    (
        "CREATE INDEX ix_dream_runs_running ON dream_runs USING btree (anima_id) WHERE ((status)::text = "
        "'running'::text)"
    ),
    "CREATE INDEX ix_events_anima_occurred ON events USING btree (anima_key, occurred_at) WHERE time_indexed",
    (
        "CREATE INDEX ix_events_anima_session ON events USING btree (anima_key, session_id, occurred_at) "
        "WHERE time_indexed"
    ),
    "CREATE INDEX ix_generations_org_anima_created ON generations USING btree (org_id, anima_id, created_at)",
    "CREATE INDEX ix_knowledge_anima_hash ON knowledge USING btree (anima_id, content_hash) WHERE vector_indexed",
    "CREATE INDEX ix_knowledge_anima_subject ON knowledge USING btree (anima_id, subject_key)",
    (
        "CREATE INDEX ix_knowledge_embedding_hnsw256 ON knowledge USING hnsw (((embedding)::halfvec(256)) "
        "halfvec_cosine_ops) WITH (m='16', ef_construction='40') WHERE ((vector_dims(embedding) = 256) AND "
        "vector_indexed)"
    ),
    (
        "CREATE INDEX ix_knowledge_embedding_hnsw384 ON knowledge USING hnsw (((embedding)::halfvec(384)) "
        "halfvec_cosine_ops) WITH (m='16', ef_construction='40') WHERE ((vector_dims(embedding) = 384) AND "
        "vector_indexed)"
    ),
    (
        "CREATE INDEX ix_knowledge_embedding_space ON knowledge USING btree (embedding_space) WHERE "
        "(embedding IS NOT NULL)"
    ),
    "CREATE INDEX ix_knowledge_fts ON knowledge USING gin (fts) WITH (fastupdate=off) WHERE vector_indexed",
    "CREATE INDEX ix_knowledge_memories_memory ON knowledge_memories USING btree (memory_id)",
    "CREATE INDEX ix_knowledge_org_anima_type ON knowledge USING btree (org_id, anima_id, type)",
    (
        "CREATE INDEX ix_knowledge_pack_happened ON knowledge USING btree (org_id, anima_id, "
        "COALESCE(valid_from, created_at)) INCLUDE (importance, confidence, valid_from, created_at, id) WHERE"
        " ((deleted_at IS NULL) AND (valid_to IS NULL) AND (superseded_by IS NULL) AND vector_indexed)"
    ),
    (
        "CREATE INDEX ix_knowledge_pack_importance ON knowledge USING btree (org_id, anima_id, importance) "
        "INCLUDE (confidence, valid_from, created_at, id) WHERE ((deleted_at IS NULL) AND (valid_to IS NULL) "
        "AND (superseded_by IS NULL) AND vector_indexed)"
    ),
    "CREATE INDEX ix_kv_snapshots_last_used ON kv_snapshots USING btree (last_used_at)",
    "CREATE INDEX ix_kv_snapshots_org_anima ON kv_snapshots USING btree (org_id, anima_id)",
    "CREATE INDEX ix_memories_anima_session ON memories USING btree (anima_id, session_id)",
    (
        "CREATE INDEX ix_memories_embedding_hnsw256 ON memories USING hnsw (((embedding)::halfvec(256)) "
        "halfvec_cosine_ops) WITH (m='16', ef_construction='40') WHERE ((vector_dims(embedding) = 256) AND "
        "vector_indexed)"
    ),
    (
        "CREATE INDEX ix_memories_embedding_hnsw384 ON memories USING hnsw (((embedding)::halfvec(384)) "
        "halfvec_cosine_ops) WITH (m='16', ef_construction='40') WHERE ((vector_dims(embedding) = 384) AND "
        "vector_indexed)"
    ),
    (
        "CREATE INDEX ix_memories_embedding_space ON memories USING btree (embedding_space) WHERE (embedding "
        "IS NOT NULL)"
    ),
    "CREATE INDEX ix_memories_fts ON memories USING gin (fts) WITH (fastupdate=off) WHERE vector_indexed",
    "CREATE INDEX ix_memories_org_anima_state ON memories USING btree (org_id, anima_id, state)",
    (
        "CREATE INDEX ix_memories_pack_happened ON memories USING btree (anima_id, COALESCE(time_end, "
        "time_start)) INCLUDE (importance, confidence, time_start, time_end, created_at, id) WHERE "
        "((deleted_at IS NULL) AND (merged_into IS NULL) AND ((state)::text <> 'archived'::text) AND "
        "vector_indexed)"
    ),
    (
        "CREATE INDEX ix_memories_pack_importance ON memories USING btree (anima_id, importance) INCLUDE "
        "(confidence, time_start, time_end, created_at, id) WHERE ((deleted_at IS NULL) AND (merged_into IS "
        "NULL) AND ((state)::text <> 'archived'::text) AND vector_indexed)"
    ),
    (
        "CREATE INDEX ix_memories_pack_score ON memories USING btree (anima_id, ((GREATEST((0.0)::double "
        "precision, LEAST((1.0)::double precision, COALESCE(importance, (0.5)::double precision))) + "
        "((0.4)::double precision * GREATEST((0.0)::double precision, LEAST((1.0)::double precision, "
        "COALESCE(confidence, (0.5)::double precision))))))) INCLUDE (importance, confidence, time_start, "
        "time_end, id) WHERE ((deleted_at IS NULL) AND (merged_into IS NULL) AND ((state)::text <> "
        "'archived'::text) AND vector_indexed)"
    ),
    "CREATE INDEX ix_memory_packs_org_anima_created ON memory_packs USING btree (org_id, anima_id, created_at)",
    "CREATE INDEX ix_pack_snapshots_anima_version ON pack_snapshots USING btree (anima_id, state_version)",
    (
        "CREATE UNIQUE INDEX uq_events_anima_dedupe ON events USING btree (anima_key, dedupe_key) WHERE "
        "(dedupe_key IS NOT NULL)"
    ),
    "CREATE STATISTICS st_knowledge_org_anima (dependencies) ON org_id, anima_id FROM knowledge",
    "CREATE STATISTICS st_memories_org_anima (dependencies) ON org_id, anima_id FROM memories",
    r"""
CREATE FUNCTION memories_vector_indexed() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    NEW.vector_indexed := coalesce(
        (SELECT a.vectors_indexed FROM animas a WHERE a.id = NEW.anima_id), false);
    RETURN NEW;
END $$
    """,
    (
        "CREATE TRIGGER trg_knowledge_vector_indexed BEFORE INSERT ON knowledge FOR EACH ROW EXECUTE FUNCTION"
        " memories_vector_indexed()"
    ),
    (
        "CREATE TRIGGER trg_memories_vector_indexed BEFORE INSERT ON memories FOR EACH ROW EXECUTE FUNCTION "
        "memories_vector_indexed()"
    ),
    (
        "ALTER TABLE ONLY animas ADD CONSTRAINT animas_org_id_fkey FOREIGN KEY (org_id) REFERENCES orgs(id) "
        "ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY api_keys ADD CONSTRAINT api_keys_org_id_fkey FOREIGN KEY (org_id) REFERENCES "
        "orgs(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY dream_actions ADD CONSTRAINT dream_actions_anima_id_fkey FOREIGN KEY (anima_id) "
        "REFERENCES animas(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY dream_actions ADD CONSTRAINT dream_actions_org_id_fkey FOREIGN KEY (org_id) "
        "REFERENCES orgs(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY dream_actions ADD CONSTRAINT dream_actions_run_id_fkey FOREIGN KEY (run_id) "
        "REFERENCES dream_runs(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY dream_chunks ADD CONSTRAINT dream_chunks_anima_id_fkey FOREIGN KEY (anima_id) "
        "REFERENCES animas(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY dream_chunks ADD CONSTRAINT dream_chunks_org_id_fkey FOREIGN KEY (org_id) "
        "REFERENCES orgs(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY dream_runs ADD CONSTRAINT dream_runs_anima_id_fkey FOREIGN KEY (anima_id) "
        "REFERENCES animas(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY dream_runs ADD CONSTRAINT dream_runs_org_id_fkey FOREIGN KEY (org_id) REFERENCES "
        "orgs(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY api_keys ADD CONSTRAINT api_keys_created_by_fkey FOREIGN KEY (created_by) REFERENCES "
        "api_keys(id) ON DELETE SET NULL"
    ),
    (
        "ALTER TABLE ONLY events ADD CONSTRAINT fk_events_anima FOREIGN KEY (anima_key) REFERENCES "
        "animas(key) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY generations ADD CONSTRAINT generations_anima_id_fkey FOREIGN KEY (anima_id) "
        "REFERENCES animas(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY generations ADD CONSTRAINT generations_org_id_fkey FOREIGN KEY (org_id) REFERENCES "
        "orgs(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY identities ADD CONSTRAINT identities_anima_id_fkey FOREIGN KEY (anima_id) "
        "REFERENCES animas(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY identities ADD CONSTRAINT identities_org_id_fkey FOREIGN KEY (org_id) REFERENCES "
        "orgs(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY identity_history ADD CONSTRAINT identity_history_anima_id_fkey FOREIGN KEY "
        "(anima_id) REFERENCES animas(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY identity_history ADD CONSTRAINT identity_history_org_id_fkey FOREIGN KEY (org_id) "
        "REFERENCES orgs(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY knowledge ADD CONSTRAINT knowledge_anima_id_fkey FOREIGN KEY (anima_id) REFERENCES "
        "animas(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY knowledge_memories ADD CONSTRAINT knowledge_memories_anima_id_fkey FOREIGN KEY "
        "(anima_id) REFERENCES animas(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY knowledge_memories ADD CONSTRAINT knowledge_memories_knowledge_id_fkey FOREIGN KEY "
        "(knowledge_id) REFERENCES knowledge(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY knowledge_memories ADD CONSTRAINT knowledge_memories_memory_id_fkey FOREIGN KEY "
        "(memory_id) REFERENCES memories(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY knowledge_memories ADD CONSTRAINT knowledge_memories_org_id_fkey FOREIGN KEY "
        "(org_id) REFERENCES orgs(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY knowledge ADD CONSTRAINT knowledge_org_id_fkey FOREIGN KEY (org_id) REFERENCES "
        "orgs(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY kv_snapshots ADD CONSTRAINT kv_snapshots_anima_id_fkey FOREIGN KEY (anima_id) "
        "REFERENCES animas(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY kv_snapshots ADD CONSTRAINT kv_snapshots_org_id_fkey FOREIGN KEY (org_id) "
        "REFERENCES orgs(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY memories ADD CONSTRAINT memories_anima_id_fkey FOREIGN KEY (anima_id) REFERENCES "
        "animas(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY memories ADD CONSTRAINT memories_org_id_fkey FOREIGN KEY (org_id) REFERENCES "
        "orgs(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY memory_packs ADD CONSTRAINT memory_packs_anima_id_fkey FOREIGN KEY (anima_id) "
        "REFERENCES animas(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY memory_packs ADD CONSTRAINT memory_packs_org_id_fkey FOREIGN KEY (org_id) "
        "REFERENCES orgs(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY memory_recalls ADD CONSTRAINT memory_recalls_memory_id_fkey FOREIGN KEY (memory_id)"
        " REFERENCES memories(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY pack_snapshots ADD CONSTRAINT pack_snapshots_anima_id_fkey FOREIGN KEY (anima_id) "
        "REFERENCES animas(id) ON DELETE CASCADE"
    ),
    (
        "ALTER TABLE ONLY pack_snapshots ADD CONSTRAINT pack_snapshots_org_id_fkey FOREIGN KEY (org_id) "
        "REFERENCES orgs(id) ON DELETE CASCADE"
    ),
)

TABLES = (
    "animas",
    "api_keys",
    "dream_actions",
    "dream_chunks",
    "dream_runs",
    "embedding_spaces",
    "events",
    "generations",
    "identities",
    "identity_history",
    "knowledge",
    "knowledge_memories",
    "kv_snapshots",
    "memories",
    "memory_packs",
    "memory_recalls",
    "orgs",
    "pack_snapshots",
)
FUNCTIONS = ("memories_vector_indexed()",)


def upgrade() -> None:
    for statement in SCHEMA:
        op.execute(statement)


def downgrade() -> None:
    op.execute("DROP TABLE " + ", ".join(TABLES) + " CASCADE")
    for function in FUNCTIONS:
        op.execute(f"DROP FUNCTION {function}")
    op.execute("DROP TYPE event_type")
