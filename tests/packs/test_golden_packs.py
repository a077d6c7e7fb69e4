"""Golden packs: the sha256 of every pack compiled over a fixed seeded dataset equals the recorded one.

A refactor of the compile path (candidate statements, scoring, packing, rendering, the wire) or of
the schema under it must not change what is served unless it means to. The dataset is the inject
benchmark's (:mod:`benchmarks.inject_data`: memories, knowledge, provenance, recalls and pending
events, bulk-loaded with COPY) at 1,000 and 10,000 memories, with fixed ids, a fixed ``now``, the
hash embedder and an identity; every preset is compiled without a query, with one, and with one in
a session, at two budgets. Each size gets a database of its own, so no other test's rows are in view.
The HNSW indexes are left out: an HNSW graph's levels are drawn at random as it is built, so its
approximate top-k differs from one load to the next; the same statements then scan exactly.

When a change is meant to alter packs, regenerate the hashes in a commit that says why:
``ELEPHANTASM_UPDATE_GOLDEN=1 .venv/bin/pytest -n 0 -p no:randomly tests/packs/test_golden_packs.py``
rewrites ``golden/pack_hashes.json``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import text

from benchmarks.inject_data import QUERIES, load
from elephantasm.domain.presets import PRESET_NAMES
from elephantasm.runtime import Runtime
from elephantasm.services.packs import compiler
from elephantasm.services.packs.service import build_request
from elephantasm.settings import Settings
from tests.support.databases import own_runtime

GOLDEN = Path(__file__).with_name("golden") / "pack_hashes.json"
UPDATE = os.environ.get("ELEPHANTASM_UPDATE_GOLDEN") == "1"

NOW = datetime(2026, 6, 1, 12, 30, tzinfo=UTC)  # mid-bucket: as_of is NOW's hour
ORG = uuid.UUID("00000000-0000-4000-8000-00000000a001")
ANIMA = uuid.UUID("00000000-0000-4000-8000-00000000b001")
IDENTITY = uuid.UUID("00000000-0000-4000-8000-00000000c001")
# (name, query, session): the live session is the one the loader's pending turns belong to.
VARIANTS = (("no-query", None, None), ("query", QUERIES[0], None), ("query+session", QUERIES[2], "live"))
MAX_TOKENS = (500, 2000)


async def _seed(runtime: Runtime, memories: int) -> None:
    async with runtime.engine.begin() as conn:
        await conn.execute(text("INSERT INTO orgs (id, name) VALUES (:id, 'golden')"), {"id": ORG})
        await conn.execute(
            text(
                "INSERT INTO animas (id, org_id, name, description, meta, state_version, created_at, updated_at) "
                "VALUES (:id, :org, 'Golden', 'a research assistant', '{}', 1, :now, :now)"
            ),
            {"id": ANIMA, "org": ORG, "now": NOW},
        )
        await conn.execute(
            text(
                "INSERT INTO identities (id, org_id, anima_id, personality_type, communication_style, prose) "
                "VALUES (:id, :org, :a, 'INTJ', 'brief and direct', 'Keeps notes for the team.')"
            ),
            {"id": IDENTITY, "org": ORG, "a": ANIMA},
        )
    await load(runtime.engine.url.render_as_string(hide_password=False), str(ORG), str(ANIMA), memories,
               now=NOW, embedder=runtime.embedder, hnsw=False)  # fmt: skip


async def _hashes(runtime: Runtime) -> dict[str, str]:
    out: dict[str, str] = {}
    for preset in PRESET_NAMES:
        for name, query, session in VARIANTS:
            for max_tokens in MAX_TOKENS:
                deps = runtime.packs
                req = build_request(
                    deps, ORG, ANIMA, query=query, preset=preset, session_id=session, max_tokens=max_tokens
                )
                compiled = await compiler.compile_pack(deps, req)
                # The dataset reached the pack: a hash of empty packs would prove little.
                assert compiled.data["long_term_memory_count"] > 0 and compiled.data["has_identity"]
                out[f"{preset}/{name}/{max_tokens}"] = hashlib.sha256(compiled.body).hexdigest()
    return out


# 10k: ~15 s alone on 2 idle cores, ~60 s on a loaded one (embedding and COPY of 11k rows).
@pytest.mark.parametrize("memories", [1_000, pytest.param(10_000, marks=pytest.mark.slow)])
async def test_pack_hashes_match_the_recorded_ones(pg_url: str, settings: Settings, memories: int) -> None:
    golden_settings = settings.model_copy(update={"embedder": "hash"})
    async with own_runtime(pg_url, golden_settings, "golden") as runtime:
        frozen = dataclasses.replace(runtime, clock=lambda: NOW)
        await _seed(frozen, memories)
        hashes = await _hashes(frozen)
    recorded = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
    if UPDATE:
        recorded[str(memories)] = hashes
        GOLDEN.write_text(json.dumps(recorded, indent=2, sort_keys=True) + "\n")
    assert len(hashes) == len(PRESET_NAMES) * len(VARIANTS) * len(MAX_TOKENS)
    assert hashes == recorded.get(str(memories)), "packs changed: regenerate only if the change is meant (module doc)"
