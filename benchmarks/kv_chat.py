"""The chat endpoint's per-turn latency with and without KV snapshots.

Two fresh deployments (API process + embedded Postgres), one with snapshots on and one with
``ELEPHANTASM_LOCAL_KV_SNAPSHOTS=false``; the same anima history and the same conversation (each
turn adds a question to the history) through the ``openai`` client over loopback HTTP.
"""

from __future__ import annotations

import statistics
import time

import httpx

from benchmarks.harness import deployment
from benchmarks.kv_data import memory_line
from benchmarks.results import Section

QUESTIONS = (
    "What do you remember about my plans?",
    "Who asked about Lisbon?",
    "Anything about music?",
    "What should I do this weekend?",
    "Summarise in one sentence.",
)
FACTS = 40


def _conversation(base_url: str, api_key: str, turns: int) -> list[tuple[float, str]]:
    from openai import OpenAI

    with httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {api_key}"}, timeout=600) as c:
        anima = c.post("/api/animas", json={"name": "bench"}).json()["id"]
        events = [
            {
                "anima_id": anima,
                "event_type": "message.in",
                "role": "user",
                "content": memory_line(i)[0],
                "session_id": "history",
                "dedupe_key": f"h{i}",
            }
            for i in range(FACTS)
        ]
        c.post("/api/events/batch", json={"events": events}).raise_for_status()
    client = OpenAI(base_url=f"{base_url}/v1", api_key=api_key, timeout=600)
    history: list[dict[str, str]] = []
    out = []
    for q in QUESTIONS[:turns]:
        history.append({"role": "user", "content": q})
        t0 = time.perf_counter()
        raw = client.chat.completions.with_raw_response.create(
            model="local", messages=history, user=anima, temperature=0, max_tokens=16
        )
        took = time.perf_counter() - t0
        history.append({"role": "assistant", "content": raw.parse().choices[0].message.content or ""})
        out.append((took, raw.headers["x-elephantasm-kv"]))
    return out


def chat_section(turns: int, note: str) -> Section:
    """Run the conversation on both deployments; one row per turn."""
    runs = {}
    for label, snapshots in (("with snapshots", "true"), ("without", "false")):
        env = {
            "ELEPHANTASM_LOCAL_KV_SNAPSHOTS": snapshots,
            "ELEPHANTASM_LOCAL_N_THREADS": "1",
            "ELEPHANTASM_LOCAL_N_CTX": "2048",
            "ELEPHANTASM_LOCAL_PACK_MAX_TOKENS": "1000",
        }
        with deployment(**env) as dep:
            runs[label] = _conversation(dep.base_url, dep.api_key, turns)
    rows = []
    for i in range(turns):
        (on, kv_on), (off, kv_off) = runs["with snapshots"][i], runs["without"][i]
        rows.append([str(i + 1), f"{on * 1000:,.0f} ({kv_on})", f"{off * 1000:,.0f} ({kv_off})", f"{off / on:,.1f}x"])
    later_on = [t for t, _ in runs["with snapshots"][1:]] or [runs["with snapshots"][0][0]]
    later_off = [t for t, _ in runs["without"][1:]] or [runs["without"][0][0]]
    notes = [
        note,
        f"An anima with {FACTS} recorded memories (pack ≤ 1,000 tokens); 16 greedy tokens per turn; "
        "latency is the whole HTTP request (pack, prefill or restore, generation, recording both turns).",
        f"Median of turns 2+: {statistics.median(later_on) * 1000:,.0f} ms with snapshots vs "
        f"{statistics.median(later_off) * 1000:,.0f} ms without.",
    ]
    return Section(
        "kv-chat",
        "/v1/chat/completions per-turn latency, with and without KV snapshots",
        ["turn", "with snapshots ms (KV)", "without ms (KV)", "speed-up"],
        rows,
        notes,
    )
