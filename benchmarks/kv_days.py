"""A multi-day chat on the local model: one conversation a day, a dream between days.

Two fresh deployments (API process + embedded Postgres), KV reuse on and off
(``ELEPHANTASM_LOCAL_KV_SNAPSHOTS``); the same anima history (facts recorded, then dreamt into
memories), then per day a new conversation of a few turns through ``/v1/chat/completions``
(streamed, greedy), a few new facts, and a dream (the offline engine, in this process, on the
deployment's database) that adds memories, so the next day's pack is a new version.

Per turn: the KV outcome, prompt tokens restored from KV vs prefilled (llama.cpp's count), time to
the first streamed token, and whether the reply is identical to a full prefill of the very same
prompt in the same state (the turn's recorded generation replayed with ``?reuse=false`` after the
run). The deployment with reuse off gives the first turn of each day's time for a full prefill of
that day's (similar, not identical) prompt. Then the restore check's result per model
(``/metrics``), an exact-hit reference, and the common token prefix of consecutive days' packs
rendered in rank order (before) and oldest first (after).

Aims (recorded, not asserted): ≥ 80 % of prompt tokens from KV after the first turn; median
first token within 1.5× of an exact hit; the first chat after a dream ≥ 5× faster than a full
prefill at a ~2,000-token pack; identical greedy output in 100 % of turns.
"""

from __future__ import annotations

import asyncio
import json
import re
import statistics
import time
from dataclasses import dataclass
from typing import Any

import httpx

from benchmarks.harness import SECRET, deployment
from benchmarks.kv_data import memory_line
from benchmarks.results import Section

TITLE = "Multi-day chat on a local model: longest-prefix KV reuse across dreams and turns"


@dataclass(frozen=True)
class Size:
    days: int
    turns: int
    pack_tokens: int
    facts: int


SIZES = {"tiny": Size(2, 2, 400, 20), "small": Size(3, 3, 1000, 60), "full": Size(5, 6, 2400, 230)}
QUESTIONS = (
    "Good morning! What do you remember about my week?",
    "Who asked about Lisbon?",
    "Anything about music?",
    "What should I do this weekend?",
    "Which of my relatives did I mention most?",
    "Summarise today in one sentence.",
)
NEW_FACTS_PER_DAY = 4
REPLY_TOKENS = 24


@dataclass
class Turn:
    kv: str
    restored: int
    prefilled: int
    first_token: float
    reply: str
    generation: str
    end: float
    """Time to the end of the stream: all text out, the turn recorded, the reply evaluated for the next turn."""


def _env(snapshots: bool, size: Size) -> dict[str, str]:
    return {
        "ELEPHANTASM_LOCAL_KV_SNAPSHOTS": "true" if snapshots else "false",
        "ELEPHANTASM_LOCAL_N_THREADS": "1",
        "ELEPHANTASM_LOCAL_N_CTX": str(size.pack_tokens + 1536),
        "ELEPHANTASM_LOCAL_PACK_MAX_TOKENS": str(size.pack_tokens),
    }


def _facts(start: int, n: int, session: str, anima: str) -> list[dict[str, Any]]:
    return [
        {
            "anima_id": anima,
            "event_type": "message.in",
            "role": "user",
            "content": memory_line(i)[0],
            "session_id": session,
            "dedupe_key": f"f{i}",
            "importance_score": 0.8,
        }
        for i in range(start, start + n)
    ]


def _ask(c: httpx.Client, anima: str, session: str, messages: list[dict[str, str]]) -> Turn:
    """One streamed turn; the time to the first piece of text is the first-token latency."""
    body = {"messages": messages, "user": anima, "temperature": 0, "max_tokens": REPLY_TOKENS, "stream": True}
    t0 = time.perf_counter()
    first, pieces = None, []
    with c.stream("POST", "/v1/chat/completions", json=body, headers={"X-Elephantasm-Session": session}) as r:
        r.raise_for_status()
        for line in r.iter_lines():
            if not line.startswith("data: {"):
                continue
            delta = json.loads(line[6:])["choices"][0]["delta"].get("content")
            if delta:
                first = first or time.perf_counter() - t0
                pieces.append(delta)
        h = r.headers
    return Turn(
        h["x-elephantasm-kv"],
        int(h["x-elephantasm-kv-restored"]),
        int(h["x-elephantasm-kv-prefilled"]),
        first or time.perf_counter() - t0,
        "".join(pieces),
        h["x-elephantasm-generation"],
        time.perf_counter() - t0,
    )


def _identical_to_full_prefill(c: httpx.Client, turn: Turn) -> bool:
    """Replay the turn's recorded generation from an empty cache: the same prompt, a full prefill."""
    r = c.post(f"/api/generations/{turn.generation}/replay", params={"reuse": "false"})
    r.raise_for_status()
    body = r.json()
    return bool(body["identical"] and body["prompt_identical"] and body["kv"] == "off")


async def _dream(url: str, work: Any, org_id: str, anima_id: str) -> None:
    import uuid

    from elephantasm.runtime import build_runtime
    from elephantasm.services.dreams import run_dream
    from elephantasm.settings import Settings

    rt = build_runtime(Settings(database_url=url, data_dir=work, secret_key=SECRET, dreamer_enabled=False), url)
    try:
        await run_dream(rt.dreams, uuid.UUID(org_id), uuid.UUID(anima_id), trigger="benchmark")
    finally:
        await rt.close()


async def _pack_systems(url: str, work: Any, org_id: str, anima_id: str, size: Size, query: str) -> tuple[str, str]:
    """The day's chat system turn in rank order (as ``as_prompt()`` renders it) and oldest first."""
    import uuid

    from elephantasm.runtime import build_runtime
    from elephantasm.services import packs as pack_svc
    from elephantasm.services.kv.prefix import CHAT_PACK_OVERRIDES, stable_context, system_text
    from elephantasm.settings import Settings

    cfg = Settings(database_url=url, data_dir=work, secret_key=SECRET, dreamer_enabled=False)
    rt = build_runtime(cfg, url)
    try:
        deps = rt.packs
        req = pack_svc.build_request(
            deps,
            uuid.UUID(org_id),
            uuid.UUID(anima_id),
            query=query,
            overrides=CHAT_PACK_OVERRIDES,
            max_tokens=size.pack_tokens,
            session_id="probe",
        )
        body = json.loads((await pack_svc.compile_now(deps, req)).body)
    finally:
        await rt.close()
    preamble = cfg.local_system_prompt
    return system_text(preamble, body["context"]), system_text(
        preamble, stable_context(body["content"], body["context"])
    )


def _days(snapshots: bool, size: Size) -> dict[str, Any]:
    """Run every day on a fresh deployment; the turns, the packs and the restore checks."""
    with (
        deployment(**_env(snapshots, size)) as dep,
        httpx.Client(base_url=dep.base_url, headers=dep.headers, timeout=1200) as c,
    ):
        return _on(dep, c, snapshots, size)


def _on(dep: Any, c: httpx.Client, snapshots: bool, size: Size) -> dict[str, Any]:
    out: dict[str, Any] = {"turns": [], "packs": []}
    anima = c.post("/api/animas", json={"name": "daily"}).json()["id"]
    c.post("/api/events/batch", json={"events": _facts(0, size.facts, "history", anima)}).raise_for_status()
    asyncio.run(_dream(dep.database_url, dep.work_dir, dep.org_id, anima))
    for day in range(size.days):
        session, history = f"day-{day + 1}", []
        out["packs"].append(
            asyncio.run(_pack_systems(dep.database_url, dep.work_dir, dep.org_id, anima, size, QUESTIONS[0]))
        )
        # Reuse off: the first turn of each day only (a full prefill of the whole prompt per turn
        # takes minutes on a busy 2-core machine; the later turns' prefill grows the same way).
        for q in QUESTIONS[: size.turns if snapshots else 1]:
            history.append({"role": "user", "content": q})
            turn = _ask(c, anima, session, history)
            history.append({"role": "assistant", "content": turn.reply})
            out["turns"].append((day + 1, turn))
            print(
                f"   day {day + 1} {turn.kv}: {turn.restored}+{turn.prefilled} tokens, {turn.first_token:.2f} s",
                flush=True,
            )
        if day + 1 < size.days:
            new = _facts(size.facts + day * NEW_FACTS_PER_DAY, NEW_FACTS_PER_DAY, f"notes-{day + 1}", anima)
            c.post("/api/events/batch", json={"events": new}).raise_for_status()
            asyncio.run(_dream(dep.database_url, dep.work_dir, dep.org_id, anima))
    if snapshots:  # the last day's first turn again, after another anima displaced the live cache
        other = c.post("/api/animas", json={"name": "other"}).json()["id"]
        hits = []
        for i in range(3):
            _ask(c, other, f"other-{i}", [{"role": "user", "content": "Hello!"}])
            hits.append(_ask(c, anima, f"day-{size.days}", [{"role": "user", "content": QUESTIONS[0]}]))
        out["exact"] = hits
    out["metrics"] = c.get("/metrics").text  # before the replays: the restore checks of the turns
    if snapshots:  # after every measured turn, so the replays' full prefills disturb no timing
        out["identical"] = [_identical_to_full_prefill(c, t) for _, t in out["turns"]]
        out["exact_identical"] = _identical_to_full_prefill(c, out["exact"][0])
    out["snapshots"] = c.get("/api/kv-snapshots").json() if snapshots else None
    return out


def _checks(exposition: str) -> str:
    found = re.findall(r'elephantasm_kv_restore_checks_total\{model="([^"]+)",result="(\w+)"\} ([\d.]+)', exposition)
    return "; ".join(f"{m}: {r} {float(v):.0f}" for m, r, v in found) or "no restores"


def _prefix_rows(packs: list[tuple[str, str]]) -> list[str]:
    """Common token prefix of consecutive days' system turns, rank order vs oldest first."""
    from elephantasm.domain.kv.prefix_index import common_prefix
    from elephantasm.local.engine import LocalEngine
    from elephantasm.local.model import resolve_model_path

    engine = LocalEngine(resolve_model_path(None), n_ctx=256, n_threads=1, memory_bytes=0)

    def toks(text: str) -> list[int]:
        return engine.tokenize_prefix(engine.split_prompt(text, [])[0])

    notes = []
    for d in range(1, len(packs)):
        (r0, s0), (r1, s1) = packs[d - 1], packs[d]
        before, after = common_prefix(toks(r0), toks(r1)), common_prefix(toks(s0), toks(s1))
        notes.append(f"day {d}→{d + 1}: {len(toks(r1)):,} tokens, shared {before:,} ranked vs {after:,} oldest first")
    return notes


def _outcome(turn_no: int, kv: str) -> str:
    """The kind of reuse a turn exercised: a later turn of the day continues the conversation."""
    return f"continuation ({kv})" if turn_no > 1 else kv


def _by_outcome(kinds: list[str], same: list[bool]) -> str:
    counts: dict[str, list[int]] = {}
    for kind, ok in zip(kinds, same, strict=True):
        counts.setdefault(kind, [0, 0])
        counts[kind][0] += ok
        counts[kind][1] += 1
    return ", ".join(f"{kind} {n}/{total}" for kind, (n, total) in counts.items())


def days_section(size_name: str, note: str) -> Section:
    """Both deployments, one row per turn."""
    size = SIZES[size_name]
    on, off = _days(True, size), _days(False, size)
    rows, kinds = [], []
    off_first = {day: t for day, t in off["turns"]}
    for i, ((day, a), same) in enumerate(zip(on["turns"], on["identical"], strict=True)):
        b = off_first[day] if i % size.turns == 0 else None
        kinds.append(_outcome(i % size.turns + 1, a.kv))
        rows.append(
            [
                str(day),
                str(i % size.turns + 1),
                a.kv,
                f"{a.restored:,} / {a.prefilled:,}",
                f"{a.first_token * 1000:,.0f}",
                "yes" if same else "NO",
                f"{b.prefilled:,}" if b else "",
                f"{b.first_token * 1000:,.0f}" if b else "",
                f"{b.first_token / a.first_token:,.1f}x" if b else "",
            ]
        )
    later = [t for _, t in on["turns"][1:]]
    served = sum(t.restored for t in later) / max(1, sum(t.restored + t.prefilled for t in later))
    median_on = statistics.median(t.first_token for t in later)
    exact = statistics.median(t.first_token for t in on["exact"])
    firsts = [(a, off_first[day]) for k, (day, a) in enumerate(on["turns"]) if k % size.turns == 0]
    after_dream = ", ".join(f"{b.first_token / a.first_token:,.1f}x ({a.kv})" for a, b in firsts[1:]) or "n/a"
    same = [*on["identical"], on["exact_identical"]]
    items = on["snapshots"] or []
    notes = [
        note,
        f"{size.days} days × {size.turns} turns, pack ≤ {size.pack_tokens:,} tokens, {size.facts} facts dreamt "
        f"before day 1 and {NEW_FACTS_PER_DAY} new facts + the day's turns dreamt between days; {REPLY_TOKENS} greedy "
        "tokens per turn, streamed; first token = time to the first streamed text of the HTTP request.",
        f"Prompt tokens from KV after the first turn: {served * 100:.0f} % (aim ≥ 80 %).",
        f"Median first token after the first turn: {median_on * 1000:,.0f} ms vs an exact hit {exact * 1000:,.0f} ms "
        f"({median_on / exact:.2f}×, aim ≤ 1.5×); the exact hit is the last day's first turn asked again after "
        f"another anima's chat displaced the live cache (median of 3; restored+prefilled: "
        f"{', '.join(f'{t.restored}+{t.prefilled}' for t in on['exact'])}).",
        "After the first token, the stream ended (every piece out, turn recorded, snapshot kept, the reply "
        "evaluated for the next turn) a median "
        f"{statistics.median(t.end - t.first_token for t in later) * 1000:,.0f} ms later.",
        f"First chat after each dream, full prefill (reuse off, that day's first turn) vs reuse on: {after_dream} "
        "(aim ≥ 5×).",
        f"Identical to a full prefill of the same prompt in the same state (each turn's generation replayed with "
        f"?reuse=false after the run): {sum(same)}/{len(same)} — {_by_outcome([*kinds, 'exact hit'], same)} "
        "(aim 100 %).",
        f"Restore checks (llama.cpp's count of evaluated tokens vs the uncached suffix): {_checks(on['metrics'])}.",
        f"Disk snapshots at the end (pack prefixes only; conversations stay in memory): {len(items)}, "
        f"{sum(int(s.get('bytes', 0)) for s in items) / 2**20:,.0f} MiB.",
        "Pack versions, common token prefix of consecutive days' chat system turns: "
        + "; ".join(_prefix_rows(on["packs"]))
        + ".",
    ]
    return Section(
        "kv-days",
        TITLE,
        [
            "day",
            "turn",
            "KV",
            "restored / prefilled",
            "first token ms",
            "identical to full prefill",
            "off: prefilled",
            "off: first token ms",
            "speed-up",
        ],
        rows,
        notes,
    )


def run(size: str) -> list[Section]:
    """The multi-day chat alone (also part of ``benchmarks kv``)."""
    import os

    note = f"Load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at the start."
    return [days_section(size, note)]
