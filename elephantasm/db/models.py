"""Table models: the schema as the application sees it (``elephantasm.db.ddl`` adds what a model
cannot state; ``tests/test_migrations.py`` checks the migrations build the same). Wire schemas live
in ``elephantasm.schemas``: never return a row from the API."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Column,
    Computed,
    DateTime,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    LargeBinary,
    PrimaryKeyConstraint,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    func,
    literal_column,
    text,
)
from sqlalchemy import Identity as IdentityColumn
from sqlalchemy.dialects.postgresql import ARRAY, ENUM, JSONB, TSVECTOR, UUID
from sqlalchemy.orm import column_property
from sqlmodel import Field, SQLModel

from elephantasm.db import ddl, event_state
from elephantasm.db.json_columns import DefaultAsNullJsonb
from elephantasm.db.size_switches import EVENT_FLAG, VECTOR_FLAG
from elephantasm.db.vectors import INDEXED_DIMS, FastHalfVec, stored_key, width_is
from elephantasm.domain.enums import DreamStatus, EventType, KnowledgeType, MemoryState, values

HNSW_M = 16
HNSW_EF_CONSTRUCTION = 40
"""Build parameters of every HNSW index: 40, not pgvector's 64, makes inserts cheaper at the same recall."""
MEMORY_RECALLS_FILLFACTOR = 70
"""Room on each ``memory_recalls`` page for the new versions of its rows' recall updates (HOT)."""
MEMORY_TOAST_TARGET = 8160
"""A ~2.2 kB memory row keeps its vector and text inline instead of in TOAST."""
DREAM_ACTIONS_TOAST_TARGET = 128
"""The journal's arrays are compressed inline as soon as a row passes 128 bytes."""


def _uuid_pk() -> Any:
    # Random for rows made one at a time; bulk writers pass time-ordered ids (elephantasm.ids).
    return Field(default_factory=uuid.uuid4, sa_column=Column(UUID(as_uuid=True), primary_key=True))


def _ts(nullable: bool = True, server_now: bool = False, index: bool = False) -> Any:
    return Field(
        default=None,
        sa_column=Column(
            DateTime(timezone=True),
            nullable=nullable,
            server_default=func.now() if server_now else None,
            index=index,
        ),
    )


def _fk(target: str, nullable: bool = False, ondelete: str = "CASCADE", **column: Any) -> Any:
    fk = ForeignKey(target, ondelete=ondelete)
    return Field(default=None, sa_column=Column(UUID(as_uuid=True), fk, nullable=nullable, **column))


def _jsonb() -> Any:
    return Field(default_factory=dict, sa_column=Column(JSONB, nullable=False, server_default=text("'{}'::jsonb")))


def _zero(kind: Any = Integer) -> Any:
    """A NOT NULL counter starting at 0."""
    return Field(default=0, sa_column=Column(kind, nullable=False, server_default=text("0")))


def _false() -> Any:
    """A NOT NULL flag starting false."""
    return Field(default=False, sa_column=Column(Boolean, nullable=False, server_default=text("false")))


def _fts(expression: str) -> Any:
    return Field(default=None, sa_column=Column(TSVECTOR, Computed(expression, persisted=True), nullable=True))


def _vector() -> Any:
    # Half precision: half the bytes of float4 at no loss of cosine ranking for normalised embeddings.
    # No fixed width: each vector has its model's own, indexed per width by _hnsw.
    return Field(default=None, sa_column=Column(FastHalfVec(), nullable=True))


def _space() -> Any:
    # The embedder that made ``embedding``, as its ``embedding_spaces.id``: vectors of different
    # spaces are never compared. NULL: no embedding.
    return Field(default=None, sa_column=Column(SmallInteger, nullable=True))


def _gin(name: str) -> Index:
    # fastupdate off: its pending list is scanned linearly by every search until a vacuum merges it.
    return Index(
        name,
        "fts",
        postgresql_using="gin",
        postgresql_with={"fastupdate": "off"},
        postgresql_where=text(VECTOR_FLAG),
    )


def _space_index(table: str) -> Index:
    return Index(f"ix_{table}_embedding_space", "embedding_space", postgresql_where=text("embedding IS NOT NULL"))


def _hnsw(table: str, only: str = "") -> tuple[Index, ...]:
    # One partial expression index per indexed width (HNSW needs a fixed width); ``only``: a further
    # condition on the rows indexed.
    return tuple(
        Index(
            f"ix_{table}_embedding_hnsw{dim}",
            literal_column(stored_key("embedding", dim)).label(f"embedding_{dim}"),
            postgresql_using="hnsw",
            postgresql_ops={f"embedding_{dim}": "halfvec_cosine_ops"},
            postgresql_with={"m": HNSW_M, "ef_construction": HNSW_EF_CONSTRUCTION},
            postgresql_where=text(width_is("embedding", dim) + (f" AND {only}" if only else "")),
        )
        for dim in INDEXED_DIMS
    )


def _pack_candidate_indexes(
    table: str, happened: str, columns: list[str], live: str, owner: tuple[str, ...] = ("org_id", "anima_id")
) -> tuple[Index, Index]:
    """Covering partial indexes for the pack's top-k (``services/packs/topk.py``), keyed on when the row
    happened and on importance, carrying every column the score needs. ``owner``: the leading keys."""
    return (
        Index(
            f"ix_{table}_pack_happened",
            *owner,
            text(happened),
            postgresql_include=["importance", *columns],
            postgresql_where=text(live),
        ),
        Index(
            f"ix_{table}_pack_importance",
            *owner,
            "importance",
            postgresql_include=columns,
            postgresql_where=text(live),
        ),
    )


# A memory a pack may serve (not deleted, merged away or archived): the pack indexes' predicate.
MEMORY_LIVE = "deleted_at IS NULL AND merged_into IS NULL AND state <> 'archived'"
# The search indexes (HNSW, pack, full-text) hold large animas' rows only; small ones use an anima btree.
LARGE_ONLY = f" AND {VECTOR_FLAG}"


# The presets' memory score without its time terms: importance + SCORE_KEY_RATIO × confidence, each
# clamped to [0, 1] as the score clamps them. ix_memories_pack_score indexes it, so the pack's
# importance arm reads about k index tuples (``services/packs/topk.py``); statements use the text as is.
SCORE_KEY_RATIO = 0.4


def memory_score_key(alias: str = "") -> str:
    """The indexed score key over ``importance`` / ``confidence``, qualified by ``alias`` if given."""
    a = f"{alias}." if alias else ""
    return (
        f"(greatest(0.0, least(1.0, coalesce({a}importance, 0.5))) + {SCORE_KEY_RATIO!r} * "
        f"greatest(0.0, least(1.0, coalesce({a}confidence, 0.5))))"
    )


# --- Tenancy ---


class Org(SQLModel, table=True):
    """A tenant. Everything else belongs to exactly one org."""

    __tablename__ = "orgs"
    id: uuid.UUID = _uuid_pk()
    name: str = Field(sa_column=Column(String(200), nullable=False, unique=True))
    created_at: datetime = _ts(nullable=False, server_now=True)


class ApiKey(SQLModel, table=True):
    """An API key; only its keyed hash (HMAC-SHA256) is stored, plus a short prefix for display."""

    __tablename__ = "api_keys"
    id: uuid.UUID = _uuid_pk()
    org_id: uuid.UUID = _fk("orgs.id")
    name: str | None = Field(default=None, sa_column=Column(String(200), nullable=True))
    prefix: str = Field(sa_column=Column(String(32), nullable=False))
    key_hash: str = Field(sa_column=Column(String(64), nullable=False, unique=True))
    created_at: datetime = _ts(nullable=False, server_now=True)
    expires_at: datetime | None = _ts()
    revoked_at: datetime | None = _ts()
    last_used_at: datetime | None = _ts()
    scope: str = Field(default="admin", sa_column=Column(String(16), nullable=False, server_default="admin"))
    created_by: uuid.UUID | None = _fk("api_keys.id", nullable=True, ondelete="SET NULL")

    __table_args__ = (
        Index("ix_api_keys_org_id", "org_id"),
        CheckConstraint("scope IN ('admin', 'write', 'read')", name="ck_api_keys_scope"),
    )


class EmbeddingSpaceRow(SQLModel, table=True):
    """An embedding space's label (``EmbeddingSpace.label()``) under the 2-byte code memories and
    knowledge store. The server's embedders, shared by every org; rows are only ever added."""

    __tablename__ = "embedding_spaces"
    id: int = Field(default=None, sa_column=Column(SmallInteger, IdentityColumn(always=True), primary_key=True))
    label: str = Field(sa_column=Column(Text, nullable=False, unique=True))


# --- Animas and events ---


class Anima(SQLModel, table=True):
    """An agent whose memory we keep. ``state_version`` rises with every write that can change a pack."""

    __tablename__ = "animas"
    id: uuid.UUID = _uuid_pk()
    org_id: uuid.UUID = _fk("orgs.id")
    name: str = Field(sa_column=Column(String(200), nullable=False))
    description: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    meta: dict[str, Any] = _jsonb()
    # The published SDK parses user_id as a UUID: an external end-user id, not a tenant.
    user_id: uuid.UUID | None = Field(default=None, sa_column=Column(UUID(as_uuid=True), nullable=True))
    state_version: int = _zero(BigInteger)
    last_event_at: datetime | None = _ts()
    created_at: datetime = _ts(nullable=False, server_now=True)
    updated_at: datetime = _ts(nullable=False, server_now=True)
    deleted_at: datetime | None = _ts()
    # Dream back-off: consecutive failed runs, when the scheduler may try again, and the state
    # (ok | backoff | failed) a client sees. "failed" is never retried automatically.
    dream_status: str = Field(default="ok", sa_column=Column(String(16), nullable=False, server_default="ok"))
    dream_failures: int = _zero()
    dream_retry_at: datetime | None = _ts()
    # state_version at the latest forget: packs compiled from an older state are never recorded.
    forgotten_version: int = _zero(BigInteger)
    # ``event_seq``: the last ``events.seq`` handed out, under this row's lock (seqs are in commit
    # order); events with ``seq > distilled_seq`` are pending. Distilling moves only the watermark.
    event_seq: int = _zero(BigInteger)
    distilled_seq: int = _zero(BigInteger)
    # A compact key, never reused nor on the wire: events carry it instead of the 16-byte uuid.
    key: int = Field(default=None, sa_column=Column(BigInteger, IdentityColumn(always=True), nullable=False))
    # The size switches (``elephantasm.db.size_switches``), set once and never reset: memories in the
    # HNSW, pack and full-text indexes; events in the time and session indexes.
    vectors_indexed: bool = _false()
    events_indexed: bool = _false()

    __table_args__ = (
        Index("ix_animas_org_created", "org_id", "created_at", "id"),
        UniqueConstraint("key", name="uq_animas_key"),  # the target of the events' foreign key
    )


EVENT_TYPES = values(EventType)
EVENT_META = DefaultAsNullJsonb("{}")
"""``events.meta``: NULL is ``{}``."""


DEDUPE_KEYED = "dedupe_key IS NOT NULL"
"""The predicate of ``uq_events_anima_dedupe``: inserts name it in their ``ON CONFLICT``."""


class Event(SQLModel, table=True):
    """One thing that happened to an anima. Immutable once written: the dreamer keeps its progress on
    the anima (``distilled_seq``) and in :class:`DreamChunk`, never in the event row."""

    __tablename__ = "events"
    id: uuid.UUID = _uuid_pk()
    # No org_id or anima_id: both follow from ``anima_key``; ``anima_id`` is derived on load (below).
    if TYPE_CHECKING:
        anima_id: uuid.UUID
    # A Postgres enum: 4 bytes instead of the label's 11–12; asyncpg reads and binds it as the label.
    event_type: str = Field(sa_column=Column(ENUM(*EVENT_TYPES, name="event_type"), nullable=False))
    role: str | None = Field(default=None, sa_column=Column(String(64), nullable=True))
    author: str | None = Field(default=None, sa_column=Column(String(200), nullable=True))
    summary: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    content: str = Field(sa_column=Column(Text, nullable=False))
    occurred_at: datetime = _ts(nullable=False, server_now=True)
    session_id: str | None = Field(default=None, sa_column=Column(String(200), nullable=True))
    meta: dict[str, Any] = Field(default_factory=dict, sa_column=Column(EVENT_META, nullable=True))
    source_uri: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    dedupe_key: str | None = Field(default=None, sa_column=Column(String(200), nullable=True))
    importance_score: float | None = Field(default=None, sa_column=Column(Float, nullable=True))
    created_at: datetime = _ts(nullable=False, server_now=True)
    # Events are immutable: always ``created_at``, computed on read, never stored.
    updated_at: datetime = Field(
        default=None, sa_column=Column(DateTime(timezone=True), Computed("created_at", persisted=False))
    )
    # Position in the anima's event sequence (see ``Anima.event_seq``).
    seq: int = Field(sa_column=Column(BigInteger, nullable=False))
    # ``Anima.key``: the event's only reference to its anima and org. The anima-keyed indexes lead
    # with it; with int8-wide keys Postgres splits a full leaf where inserts go (nbtsplitloc.c), not
    # 50/50, so the pages of an anima's mid-index range stay full.
    anima_key: int = Field(sa_column=Column(BigInteger, nullable=False))
    # True when the anima is large (``Anima.events_indexed``), else NULL (no bytes in the row): the
    # predicate of the time and session indexes (``elephantasm.db.size_switches``).
    time_indexed: bool | None = Field(default=None, sa_column=Column(Boolean, nullable=True))
    __table_args__ = (
        ForeignKeyConstraint(["anima_key"], ["animas.key"], name="fk_events_anima", ondelete="CASCADE"),
        Index("uq_events_anima_dedupe", "anima_key", "dedupe_key", unique=True, postgresql_where=text(DEDUPE_KEYED)),
        # An anima's pending range, the dreamer's chunks, and every time-ordered read of a small anima.
        UniqueConstraint("anima_key", "seq", name="uq_events_anima_seq"),
        # Large animas' events in time order (no ``id``: ties on it are sorted incrementally), and
        # per session: a page of a session's listing reads one index range.
        Index("ix_events_anima_occurred", "anima_key", "occurred_at", postgresql_where=text(EVENT_FLAG)),
        Index("ix_events_anima_session", "anima_key", "session_id", "occurred_at", postgresql_where=text(EVENT_FLAG)),
    )


# --- Memories and knowledge ---

MEMORY_STATES = values(MemoryState)


class Memory(SQLModel, table=True):
    """A distilled experience: a few related events, summarised and scored."""

    __tablename__ = "memories"
    id: uuid.UUID = _uuid_pk()
    org_id: uuid.UUID = _fk("orgs.id")
    anima_id: uuid.UUID = _fk("animas.id")
    summary: str = Field(sa_column=Column(Text, nullable=False))
    # The text the memory was distilled from (the offline engine: its events' "speaker: text" lines).
    content: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    importance: float = Field(default=0.5, sa_column=Column(Float, nullable=False, server_default=text("0.5")))
    confidence: float = Field(default=0.5, sa_column=Column(Float, nullable=False, server_default=text("0.5")))
    state: str = Field(default="active", sa_column=Column(String(16), nullable=False, server_default="active"))
    session_id: str | None = Field(default=None, sa_column=Column(String(200), nullable=True))
    time_start: datetime | None = _ts()
    time_end: datetime | None = _ts()
    # Recall state (how often and when last served) lives in ``memory_recalls``.
    merged_into: uuid.UUID | None = Field(default=None, sa_column=Column(UUID(as_uuid=True), nullable=True))
    meta: dict[str, Any] = _jsonb()
    embedding: Any = _vector()
    embedding_space: str | None = _space()
    # The fact-bearing turns' vectors with their lines (domain/turn_vectors.py); NULL: relevance
    # uses the summary alone.
    turn_vectors: bytes | None = Field(default=None, sa_column=Column(LargeBinary, nullable=True))
    # Provenance: the source events' ids, ascending (after merges, the union). An array, not a link
    # table: 16 bytes a link instead of a ~200-byte row with its keys and index.
    event_ids: list[uuid.UUID] = Field(
        default_factory=list,
        sa_column=Column(ARRAY(UUID(as_uuid=True)), nullable=False, server_default=text("'{}'::uuid[]")),
    )
    # Lexemes without positions (strip): ts_rank then counts each matched lexeme once.
    fts: Any = _fts("strip(to_tsvector('english', summary || ' ' || coalesce(content, '')))")
    created_at: datetime = _ts(nullable=False, server_now=True)
    updated_at: datetime = _ts(nullable=False, server_now=True)
    deleted_at: datetime | None = _ts()
    # The anima's ``vectors_indexed``, copied at insert (trigger in ``db.ddl``) and when it flips.
    vector_indexed: bool = _false()

    __table_args__ = (
        Index("ix_memories_org_anima_state", "org_id", "anima_id", "state"),
        Index("ix_memories_anima_session", "anima_id", "session_id"),
        _gin("ix_memories_fts"),
        *_hnsw("memories", VECTOR_FLAG),
        _space_index("memories"),
        # Keyed on the anima alone (16 bytes less per entry): the pack tests the org on the rows it reads.
        *_pack_candidate_indexes(
            "memories",
            "coalesce(time_end, time_start)",
            ["confidence", "time_start", "time_end", "created_at", "id"],
            MEMORY_LIVE + LARGE_ONLY,
            owner=("anima_id",),
        ),
        Index(
            "ix_memories_pack_score",
            "anima_id",
            text(memory_score_key()),
            postgresql_include=["importance", "confidence", "time_start", "time_end", "id"],
            postgresql_where=text(MEMORY_LIVE + LARGE_ONLY),
        ),
        {"postgresql_with": {"toast_tuple_target": MEMORY_TOAST_TARGET}},
    )


class MemoryRecall(SQLModel, table=True):
    """A memory's recall state: how often it was served in a pack, and when last (no row: never).

    Out of ``memories`` so that recording a recall is a HOT update (no index holds these columns;
    ``fillfactor`` leaves room) instead of a new entry in every index of a ~2.5 kB row. ``org_id``
    and ``anima_id`` copy the memory's, whose cascading foreign key already ties the row to both.
    """

    __tablename__ = "memory_recalls"
    memory_id: uuid.UUID = _fk("memories.id", primary_key=True)
    org_id: uuid.UUID = Field(sa_column=Column(UUID(as_uuid=True), nullable=False))
    anima_id: uuid.UUID = Field(sa_column=Column(UUID(as_uuid=True), nullable=False))
    recall_count: int = _zero()
    last_recalled_at: datetime | None = _ts()

    __table_args__ = {"postgresql_with": {"fillfactor": MEMORY_RECALLS_FILLFACTOR}}


KNOWLEDGE_TYPES = values(KnowledgeType)


class Knowledge(SQLModel, table=True):
    """A durable statement distilled from memories. Superseded items stay, with ``valid_to`` set."""

    __tablename__ = "knowledge"
    id: uuid.UUID = _uuid_pk()
    org_id: uuid.UUID = _fk("orgs.id")
    anima_id: uuid.UUID = _fk("animas.id")
    type: str = Field(sa_column=Column(String(16), nullable=False))
    topic: str | None = Field(default=None, sa_column=Column(String(200), nullable=True))
    subject_key: str | None = Field(
        default=None,
        sa_column=Column(String(300), nullable=True),
        description="Normalised subject ('user.favourite_colour'); two current items with one key contradict.",
    )
    content: str = Field(sa_column=Column(Text, nullable=False))
    summary: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    content_hash: str = Field(sa_column=Column(String(64), nullable=False))
    confidence: float = Field(default=0.5, sa_column=Column(Float, nullable=False, server_default=text("0.5")))
    importance: float = Field(default=0.5, sa_column=Column(Float, nullable=False, server_default=text("0.5")))
    valid_from: datetime | None = _ts()
    valid_to: datetime | None = _ts()
    superseded_by: uuid.UUID | None = Field(default=None, sa_column=Column(UUID(as_uuid=True), nullable=True))
    meta: dict[str, Any] = _jsonb()
    embedding: Any = _vector()
    embedding_space: str | None = _space()
    fts: Any = _fts("to_tsvector('english', coalesce(topic, '') || ' ' || content)")
    created_at: datetime = _ts(nullable=False, server_now=True)
    updated_at: datetime = _ts(nullable=False, server_now=True)
    deleted_at: datetime | None = _ts()
    # As memories' ``vector_indexed``.
    vector_indexed: bool = _false()

    __table_args__ = (
        Index("ix_knowledge_org_anima_type", "org_id", "anima_id", "type"),
        Index("ix_knowledge_anima_subject", "anima_id", "subject_key"),
        # Large animas only: a small anima's few items are found through ix_knowledge_anima_subject.
        Index("ix_knowledge_anima_hash", "anima_id", "content_hash", postgresql_where=text(VECTOR_FLAG)),
        _gin("ix_knowledge_fts"),
        *_hnsw("knowledge", VECTOR_FLAG),
        _space_index("knowledge"),
        *_pack_candidate_indexes(
            "knowledge",
            "coalesce(valid_from, created_at)",
            ["confidence", "valid_from", "created_at", "id"],
            "deleted_at IS NULL AND valid_to IS NULL AND superseded_by IS NULL" + LARGE_ONLY,
        ),
    )


class KnowledgeMemory(SQLModel, table=True):
    """Provenance: which memories a knowledge item came from."""

    __tablename__ = "knowledge_memories"
    knowledge_id: uuid.UUID = _fk("knowledge.id")
    memory_id: uuid.UUID = _fk("memories.id")
    org_id: uuid.UUID = _fk("orgs.id")
    anima_id: uuid.UUID = _fk("animas.id")

    __table_args__ = (
        PrimaryKeyConstraint("knowledge_id", "memory_id", name="pk_knowledge_memories"),
        Index("ix_knowledge_memories_memory", "memory_id"),
    )


# --- Identity ---


class Identity(SQLModel, table=True):
    """The anima's current identity (one row per anima); every change also lands in history."""

    __tablename__ = "identities"
    id: uuid.UUID = _uuid_pk()
    org_id: uuid.UUID = _fk("orgs.id")
    anima_id: uuid.UUID = _fk("animas.id", unique=True)
    version: int = Field(default=1, sa_column=Column(Integer, nullable=False, server_default=text("1")))
    personality_type: str | None = Field(default=None, sa_column=Column(String(100), nullable=True))
    communication_style: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    self: dict[str, Any] = _jsonb()
    prose: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    created_at: datetime = _ts(nullable=False, server_now=True)
    updated_at: datetime = _ts(nullable=False, server_now=True)


class IdentityVersion(SQLModel, table=True):
    """One historical version of an identity, with the reason it changed."""

    __tablename__ = "identity_history"
    id: uuid.UUID = _uuid_pk()
    org_id: uuid.UUID = _fk("orgs.id")
    anima_id: uuid.UUID = _fk("animas.id")
    version: int = Field(sa_column=Column(Integer, nullable=False))
    personality_type: str | None = Field(default=None, sa_column=Column(String(100), nullable=True))
    communication_style: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    self: dict[str, Any] = _jsonb()
    prose: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    reason: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    run_id: uuid.UUID | None = Field(default=None, sa_column=Column(UUID(as_uuid=True), nullable=True))
    created_at: datetime = _ts(nullable=False, server_now=True)

    __table_args__ = (UniqueConstraint("anima_id", "version", name="uq_identity_history_version"),)


# --- Packs and the snapshot cache ---


class MemoryPackRow(SQLModel, table=True):
    """A served pack (bounded retention per anima)."""

    __tablename__ = "memory_packs"
    id: uuid.UUID = _uuid_pk()
    org_id: uuid.UUID = _fk("orgs.id")
    anima_id: uuid.UUID = _fk("animas.id")
    query: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    preset_name: str = Field(sa_column=Column(String(64), nullable=False))
    session_memory_count: int = Field(default=0, sa_column=Column(Integer, nullable=False))
    knowledge_count: int = Field(default=0, sa_column=Column(Integer, nullable=False))
    long_term_memory_count: int = Field(default=0, sa_column=Column(Integer, nullable=False))
    has_identity: bool = Field(default=False)
    token_count: int = Field(default=0, sa_column=Column(Integer, nullable=False))
    max_tokens: int = Field(sa_column=Column(Integer, nullable=False))
    encoding: str = Field(sa_column=Column(String(32), nullable=False))
    fingerprint: str = Field(sa_column=Column(String(64), nullable=False))
    state_version: int = Field(sa_column=Column(BigInteger, nullable=False))
    # The wire JSON as served, kept as text: returned whole, never queried inside.
    content: str = Field(default="{}", sa_column=Column(Text, nullable=False, server_default=text("'{}'::text")))
    compiled_at: datetime = _ts(nullable=False, server_now=True)
    created_at: datetime = _ts(nullable=False, server_now=True)

    __table_args__ = (Index("ix_memory_packs_org_anima_created", "org_id", "anima_id", "created_at"),)


class PackSnapshot(SQLModel, table=True):
    """The shared tier of the pack cache, keyed by a hash of every input that shapes a pack."""

    __tablename__ = "pack_snapshots"
    cache_key: str = Field(sa_column=Column(String(64), primary_key=True))
    org_id: uuid.UUID = _fk("orgs.id")
    anima_id: uuid.UUID = _fk("animas.id")
    state_version: int = Field(sa_column=Column(BigInteger, nullable=False))
    payload: dict[str, Any] = _jsonb()
    hit_count: int = _zero()
    created_at: datetime = _ts(nullable=False, server_now=True)
    last_hit_at: datetime | None = _ts()

    __table_args__ = (Index("ix_pack_snapshots_anima_version", "anima_id", "state_version"),)


# --- Dream journal ---

DREAM_STATUSES = values(DreamStatus)


class DreamRun(SQLModel, table=True):
    """One dreamer run over one anima."""

    __tablename__ = "dream_runs"
    id: uuid.UUID = _uuid_pk()
    org_id: uuid.UUID = _fk("orgs.id")
    anima_id: uuid.UUID = _fk("animas.id")
    status: str = Field(default="running", sa_column=Column(String(16), nullable=False))
    trigger: str = Field(sa_column=Column(String(32), nullable=False))
    engine: str = Field(sa_column=Column(String(32), nullable=False))
    model: str | None = Field(default=None, sa_column=Column(String(200), nullable=True))
    worker_id: str | None = Field(default=None, sa_column=Column(String(200), nullable=True))
    started_at: datetime = _ts(nullable=False, server_now=True)
    heartbeat_at: datetime | None = _ts()
    finished_at: datetime | None = _ts()
    events_read: int = _zero()
    memories_created: int = _zero()
    knowledge_created: int = _zero()
    llm_calls: int = _zero()
    prompt_tokens: int = _zero()
    completion_tokens: int = _zero()
    counts: dict[str, Any] = _jsonb()
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    # The anima's event_seq when the run started: it distils events up to there, later ones wait.
    until_seq: int | None = Field(default=None, sa_column=Column(BigInteger, nullable=True))

    __table_args__ = (
        Index("ix_dream_runs_org_anima_started", "org_id", "anima_id", "started_at"),
        Index("ix_dream_runs_running", "anima_id", postgresql_where=text("status = 'running'")),
    )


class DreamAction(SQLModel, table=True):
    """A batch of a run's journal entries: consecutive entries of one step with the same action and
    target type, one element each in ``target_ids``, ``befores`` and ``afters`` (read through
    ``services/dreams/journal.expand``; entry ids derive from ``id`` and the position). The arrays
    are stored compressed inline (``toast_tuple_target``; ``STORAGE MAIN`` in ``db.ddl``)."""

    __tablename__ = "dream_actions"
    id: uuid.UUID = _uuid_pk()
    org_id: uuid.UUID = _fk("orgs.id")
    anima_id: uuid.UUID = _fk("animas.id")
    run_id: uuid.UUID = _fk("dream_runs.id")
    action: str = Field(sa_column=Column(String(32), nullable=False))
    target_type: str = Field(sa_column=Column(String(32), nullable=False))
    target_ids: list[uuid.UUID | None] = Field(sa_column=Column(ARRAY(UUID(as_uuid=True)), nullable=False))
    # jsonb arrays, one element per entry (JSON null for an entry's None); null when all are None.
    befores: list[Any] | None = Field(default=None, sa_column=Column(JSONB, nullable=True))
    afters: list[Any] | None = Field(default=None, sa_column=Column(JSONB, nullable=True))
    created_at: datetime = _ts(nullable=False, server_now=True)

    __table_args__ = (
        Index("ix_dream_actions_run", "run_id", "created_at"),
        {"postgresql_with": {"toast_tuple_target": DREAM_ACTIONS_TOAST_TARGET}},
    )


class DreamChunk(SQLModel, table=True):
    """One chunk of a dream run: the inclusive range ``first_seq..last_seq`` of the anima's event
    sequence it took. ``distilled_at`` NULL: claimed by a run still distilling it (released when the
    run fails); set: distilled. Distilled chunks tile ``1..animas.distilled_seq`` without overlap, so
    an event's ``distilled_at`` is its chunk's."""

    __tablename__ = "dream_chunks"
    id: uuid.UUID = _uuid_pk()
    org_id: uuid.UUID = _fk("orgs.id")
    anima_id: uuid.UUID = _fk("animas.id")
    # The run that claimed it; NULL for chunks recorded by an import.
    run_id: uuid.UUID | None = Field(default=None, sa_column=Column(UUID(as_uuid=True), nullable=True))
    first_seq: int = Field(sa_column=Column(BigInteger, nullable=False))
    last_seq: int = Field(sa_column=Column(BigInteger, nullable=False))
    claimed_at: datetime = _ts(nullable=False)
    distilled_at: datetime | None = _ts()

    __table_args__ = (
        UniqueConstraint("anima_id", "last_seq", name="uq_dream_chunks_anima_last"),
        CheckConstraint("first_seq <= last_seq", name="ck_dream_chunks_range"),
        Index("ix_dream_chunks_claims", "run_id", postgresql_where=text("distilled_at IS NULL")),
    )


# Read-only, derived on load by the SQL every reader shares (``db.event_state``); ``EventRead.anima_id``
# and ``.distilled_at`` keep their meaning on the wire.
Event.anima_id = column_property(literal_column(event_state.anima_id("events")))  # type: ignore[assignment]
Event.distilled_at = column_property(literal_column(event_state.distilled_at("events")))  # type: ignore[attr-defined]

# --- Model-level memory (local models): KV snapshots of packs and recorded generations ---


class KVSnapshotRow(SQLModel, table=True):
    """Metadata of one KV snapshot of a pack prefix; the bytes are a file in the snapshot store."""

    __tablename__ = "kv_snapshots"
    id: uuid.UUID = _uuid_pk()
    org_id: uuid.UUID = _fk("orgs.id")
    anima_id: uuid.UUID = _fk("animas.id")
    snapshot_key: str = Field(sa_column=Column(String(64), nullable=False))
    pack_fingerprint: str = Field(sa_column=Column(String(64), nullable=False))
    model_digest: str = Field(sa_column=Column(String(64), nullable=False))
    model_name: str = Field(sa_column=Column(String(200), nullable=False))
    llama_cpp_version: str = Field(sa_column=Column(String(32), nullable=False))
    kv_type: str = Field(sa_column=Column(String(16), nullable=False))
    n_ctx: int = Field(sa_column=Column(Integer, nullable=False))
    n_tokens: int = Field(sa_column=Column(Integer, nullable=False))
    token_ids_hash: str = Field(sa_column=Column(String(64), nullable=False))
    bytes: int = Field(sa_column=Column(BigInteger, nullable=False))
    sha256: str = Field(sa_column=Column(String(64), nullable=False))
    source: str = Field(default="built", sa_column=Column(String(16), nullable=False, server_default=text("'built'")))
    meta: dict[str, Any] = _jsonb()
    created_at: datetime = _ts(nullable=False, server_now=True)
    last_used_at: datetime = _ts(nullable=False, server_now=True)

    __table_args__ = (
        UniqueConstraint("anima_id", "snapshot_key", name="uq_kv_snapshots_anima_key"),
        Index("ix_kv_snapshots_org_anima", "org_id", "anima_id"),
        Index("ix_kv_snapshots_last_used", "last_used_at"),
    )


class GenerationRow(SQLModel, table=True):
    """One local-model generation with everything needed to replay it byte for byte."""

    __tablename__ = "generations"
    id: uuid.UUID = _uuid_pk()
    org_id: uuid.UUID = _fk("orgs.id")
    anima_id: uuid.UUID = _fk("animas.id")
    model_digest: str = Field(sa_column=Column(String(64), nullable=False))
    pack_fingerprint: str | None = Field(default=None, sa_column=Column(String(64), nullable=True))
    kv_status: str = Field(sa_column=Column(String(16), nullable=False))
    seed: int = Field(sa_column=Column(BigInteger, nullable=False))
    sampling: dict[str, Any] = _jsonb()
    prompt_hash: str = Field(sa_column=Column(String(64), nullable=False))
    prompt_tokens: int = Field(sa_column=Column(Integer, nullable=False))
    prompt: dict[str, Any] = _jsonb()
    output: str = Field(sa_column=Column(Text, nullable=False))
    output_tokens: int = Field(sa_column=Column(Integer, nullable=False))
    finish_reason: str = Field(sa_column=Column(String(16), nullable=False))
    created_at: datetime = _ts(nullable=False, server_now=True)

    __table_args__ = (Index("ix_generations_org_anima_created", "org_id", "anima_id", "created_at"),)


ddl.attach(SQLModel.metadata)
