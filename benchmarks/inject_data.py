"""Bulk-load one anima with N memories (+ N/10 knowledge, provenance, pending events) for ``inject``.

Rows go in with COPY (CSV) into tables whose full-text and HNSW indexes are dropped first and
rebuilt afterwards (docs/design.md §12: one-by-one inserts into an HNSW-indexed table are ~200x
slower). Texts come from a seeded generator with a few hundred words, so full-text and cosine
matching are selective the way real memories are; embeddings come from the embedder the server is
configured with (the same environment: WordLlama by default), recorded with its embedding space.
"""

from __future__ import annotations

import asyncio
import csv
import hashlib
import io
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import text

from elephantasm.db.engine import create_engine
from elephantasm.llm.embedders import Embedder

PEOPLE = "Alice Bruno Chen Dana Emeka Farah Goran Hana Ivan Julia Kenji Lena Marta Nadia Omar Priya".split()
PLACES = "Berlin Lisbon Nairobi Osaka Toronto Lima Oslo Madrid Seoul Denver Cairo Dublin Austin Milan".split()
TOPICS = (
    "budget roadmap hiring migration database outage invoice contract onboarding pricing launch "
    "security audit backlog design review offsite newsletter analytics dashboard retention churn "
    "partnership vendor training compliance refactor latency benchmark release changelog"
).split()
VERBS = "discussed approved postponed reviewed drafted cancelled planned negotiated fixed shipped estimated".split()
OBJECTS = (
    "the quarterly report|a new caching layer|the travel plan|the team lunch|a customer escalation|"
    "the API rate limits|the hiring plan|the mobile app|the data warehouse|a coffee machine upgrade|"
    "the onboarding checklist|a keynote talk|the holiday schedule|the incident postmortem"
).split("|")
PREFS = (
    "prefers green tea over coffee|likes short written summaries|is allergic to peanuts|runs every morning|"
    "wants meetings before noon|uses metric units|reads science fiction|plays the cello|dislikes long calls"
).split("|")
KNOWLEDGE_TYPES = ("FACT", "CONCEPT", "METHOD", "PRINCIPLE", "EXPERIENCE")
QUERIES = (
    "what did we decide about the budget with Alice",
    "when is the Berlin offsite and who is going",
    "how did the database migration go",
    "what does the user prefer to drink",
    "remind me about the security audit findings",
)


def memory_text(rng: random.Random) -> str:
    """One synthetic memory summary."""
    return (
        f"{rng.choice(PEOPLE)} and {rng.choice(PEOPLE)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} "
        f"for the {rng.choice(TOPICS)} {rng.choice(TOPICS)} in {rng.choice(PLACES)}; "
        f"{rng.choice(PEOPLE)} {rng.choice(PREFS)}."
    )


def knowledge_text(rng: random.Random) -> str:
    """One synthetic knowledge statement."""
    return f"{rng.choice(PEOPLE)} {rng.choice(PREFS)} and owns the {rng.choice(TOPICS)} work in {rng.choice(PLACES)}."


@dataclass(frozen=True)
class Loaded:
    """What was loaded, and how long it took."""

    memories: int
    knowledge: int
    pending: int
    load_s: float
    index_s: float


def _csv(rows: list[list[object]]) -> bytes:
    buf = io.StringIO()
    writer = csv.writer(buf)
    for row in rows:
        writer.writerow(["" if v is None else v for v in row])
    return buf.getvalue().encode()


def _server_embedder() -> Embedder:
    """The embedder the API process builds from the same environment (its vectors must match)."""
    from elephantasm.llm.factory import build_embedder
    from elephantasm.settings import Settings

    return build_embedder(Settings())


async def _embed_rows(embedder: Embedder, rows: list[list[object]], text_at: int, vec_at: int, space: int) -> None:
    """Replace each row's text placeholder at ``vec_at`` with its vector literal, and add its space's code."""
    inner = getattr(embedder, "inner", embedder)  # past the query LRU: every text is new
    vectors = await inner.embed([str(r[text_at]) for r in rows])
    for row, vec in zip(rows, vectors, strict=True):
        row[vec_at] = "[" + ",".join(f"{x:.6f}" for x in vec) + "]"
        row.append(space)


def bulk_indexes() -> list[Any]:
    """The HNSW and full-text indexes of memories and knowledge, as the models (= the migrations)
    define them: dropped for the COPY, then built once over the loaded rows."""
    from elephantasm.db.models import Knowledge, Memory

    return [
        ix
        for model in (Memory, Knowledge)
        for ix in model.__table__.indexes  # type: ignore[attr-defined]
        if "_embedding_hnsw" in ix.name or ix.name.endswith("_fts")
    ]


def create_sql(index: Any) -> str:
    from sqlalchemy.dialects import postgresql
    from sqlalchemy.schema import CreateIndex

    return str(CreateIndex(index).compile(dialect=postgresql.dialect()))


def _ids(seed: int) -> Callable[[], str]:
    """Row ids drawn from their own seeded generator (the texts' sequence stays that of ``seed``)."""
    rng = random.Random(f"ids-{seed}")
    return lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _rows(org: str, anima: str, n: int, now: datetime, seed: int) -> dict[str, list[list[object]]]:
    """Every table's rows for one anima (deterministic for a seed and ``now``)."""
    rng = random.Random(seed)
    new_id = _ids(seed)
    out: dict[str, list[list[object]]] = {
        "events": [],
        "memories": [],
        "memory_recalls": [],
        "knowledge": [],
        "knowledge_memories": [],
    }
    memory_ids = []
    for i in range(n):
        mid, eid = new_id(), new_id()
        summary = memory_text(rng)
        when = now - timedelta(seconds=rng.uniform(3600, 365 * 86400))
        recalled = when + timedelta(days=rng.uniform(0, 30)) if rng.random() < 0.3 else None
        out["events"].append(
            [eid, "message.in", "user", summary, when, f"s{i // 20}", round(rng.random(), 3), when, i + 1]
        )  # the anima's key is added at load
        out["memories"].append(
            [
                mid,
                org,
                anima,
                summary,
                round(rng.uniform(0.05, 0.95), 3),
                round(rng.uniform(0.3, 0.95), 3),
                "active",
                f"s{i // 20}",
                when,
                when,
                None,
                when,
                when,
                "{" + eid + "}",
            ]
        )
        if recalled:
            out["memory_recalls"].append([mid, org, anima, rng.randint(0, 5), recalled])
        memory_ids.append(mid)
    for _ in range(max(1, n // 10)):
        kid, content = new_id(), knowledge_text(rng)
        when = now - timedelta(seconds=rng.uniform(3600, 365 * 86400))
        out["knowledge"].append(
            [
                kid,
                org,
                anima,
                rng.choice(KNOWLEDGE_TYPES),
                rng.choice(TOPICS),
                content,
                hashlib.sha256(content.encode()).hexdigest(),
                round(rng.uniform(0.4, 0.95), 3),
                round(rng.uniform(0.2, 0.9), 3),
                when,
                None,
                when,
                when,
            ]
        )
        for mid in {rng.choice(memory_ids), rng.choice(memory_ids)}:
            out["knowledge_memories"].append([kid, mid, org, anima])
    return out


def pending_rows(now: datetime, seed: int, after: int, live: int = 20, earlier: int = 200) -> list[list[object]]:
    """Undistilled events (seqs after ``after``, the watermark): ``live`` turns of the current session
    and ``earlier`` from older sessions."""
    rng = random.Random(seed + 1)
    new_id = _ids(seed + 1)
    rows: list[list[object]] = []
    for i in range(live + earlier):
        when = now - timedelta(seconds=30 * (live - i)) if i < live else now - timedelta(days=rng.uniform(1, 20))
        text_ = memory_text(rng)
        rows.append(
            [
                new_id(),
                "message.in" if i % 2 else "message.out",
                "user" if i % 2 else "assistant",
                text_,
                when,
                "live" if i < live else f"old{i % 7}",
                round(rng.random(), 3),
                when,
                after + i + 1,
            ]
        )
    return rows


_COLUMNS = {
    # updated_at is computed; org and anima are the key's
    "events": [
        "id",
        "event_type",
        "role",
        "content",
        "occurred_at",
        "session_id",
        "importance_score",
        "created_at",
        "seq",
        "anima_key",
        "time_indexed",
    ],
    "memories": [
        "id",
        "org_id",
        "anima_id",
        "summary",
        "importance",
        "confidence",
        "state",
        "session_id",
        "time_start",
        "time_end",
        "embedding",
        "created_at",
        "updated_at",
        "event_ids",
        "embedding_space",
    ],
    "memory_recalls": ["memory_id", "org_id", "anima_id", "recall_count", "last_recalled_at"],
    "knowledge": [
        "id",
        "org_id",
        "anima_id",
        "type",
        "topic",
        "content",
        "content_hash",
        "confidence",
        "importance",
        "valid_from",
        "embedding",
        "created_at",
        "updated_at",
        "embedding_space",
    ],
    "knowledge_memories": ["knowledge_id", "memory_id", "org_id", "anima_id"],
}


async def load(
    database_url: str,
    org_id: str,
    anima_id: str,
    n: int,
    seed: int = 42,
    *,
    now: datetime | None = None,
    embedder: Embedder | None = None,
    hnsw: bool = True,
) -> Loaded:
    """Load ``n`` memories (+ knowledge, provenance, pending events) into an existing anima.

    The rows are a function of ``seed`` and ``now`` (default: the current time); ``embedder``
    defaults to the one the server builds from the environment. ``hnsw=False`` leaves the HNSW
    indexes out: cosine top-k is then an exact scan, whose answers, unlike an HNSW graph's (its
    levels are drawn at random as it is built), are the same on every load."""
    now = now or datetime.now(UTC)
    started = asyncio.get_running_loop().time()
    rows = _rows(org_id, anima_id, n, now, seed)
    embedder = embedder or _server_embedder()
    engine = create_engine(database_url, pooled=False)
    try:
        from elephantasm.services.spaces import register_space

        space = await register_space(engine, embedder.space.label())  # rows store its code
        await _embed_rows(embedder, rows["memories"], text_at=3, vec_at=10, space=space)
        await _embed_rows(embedder, rows["knowledge"], text_at=5, vec_at=10, space=space)
        rows["events"] += pending_rows(now, seed, after=n)
        async with engine.begin() as conn:
            for index in bulk_indexes():
                await conn.execute(text(f"DROP INDEX IF EXISTS {index.name}"))
            # As the dreamer leaves it: an anima of INDEX_THRESHOLD memories or more
            # is on the HNSW path, so the COPY's rows are marked at insert by the trigger.
            from elephantasm.db.size_switches import MEMORY_THRESHOLD as INDEX_THRESHOLD

            await conn.execute(
                text("UPDATE animas SET vectors_indexed = :on WHERE id = :a"),
                {"on": n >= INDEX_THRESHOLD, "a": anima_id},
            )
            key = (await conn.execute(text("SELECT key FROM animas WHERE id = :a"), {"a": anima_id})).scalar_one()
            # As the inserts leave it: an anima of size_switches.EVENT_THRESHOLD events or
            # more is in the time and session indexes, every row flagged; a smaller one's rows are not.
            from elephantasm.db.size_switches import EVENT_THRESHOLD as EVENTS_THRESHOLD

            indexed = len(rows["events"]) >= EVENTS_THRESHOLD
            await conn.execute(
                text("UPDATE animas SET events_indexed = :on WHERE id = :a"), {"on": indexed, "a": anima_id}
            )
            # an event's only reference to its anima; the flag NULL ("") unless the anima is large
            rows["events"] = [[*r, key, "t" if indexed else ""] for r in rows["events"]]
            raw = (await conn.get_raw_connection()).driver_connection
            for table in ("events", "memories", "memory_recalls", "knowledge", "knowledge_memories"):
                await raw.copy_to_table(
                    table, source=io.BytesIO(_csv(rows[table])), columns=_COLUMNS[table], format="csv", null=""
                )
            # Events 1..n were distilled (one chunk), the 220 after them are pending.
            await conn.execute(
                text(
                    "UPDATE animas SET last_event_at = :now, state_version = state_version + 1, "
                    "distilled_seq = :n, event_seq = :top WHERE id = :a"
                ),
                {"now": now, "a": anima_id, "n": n, "top": len(rows["events"])},
            )
            await conn.execute(
                text(
                    "INSERT INTO dream_chunks (id, org_id, anima_id, first_seq, last_seq, claimed_at, "
                    "distilled_at) VALUES (gen_random_uuid(), :o, :a, 1, :n, :now, :now)"
                ),
                {"o": org_id, "a": anima_id, "n": n, "now": now},
            )
        loaded_at = asyncio.get_running_loop().time()
        async with engine.connect() as conn:
            await conn.execute(text("SET maintenance_work_mem = '512MB'"))
            for index in bulk_indexes():
                if hnsw or "_embedding_hnsw" not in index.name:
                    await conn.execute(text(create_sql(index)))
            await conn.commit()
            raw = (await conn.get_raw_connection()).driver_connection
            await raw.execute("VACUUM ANALYZE events, memories, memory_recalls, knowledge, knowledge_memories")
    finally:
        await engine.dispose()
    end = asyncio.get_running_loop().time()
    return Loaded(n, len(rows["knowledge"]), 220, loaded_at - started, end - loaded_at)
