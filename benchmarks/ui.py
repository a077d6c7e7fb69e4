"""Inspector page latency over HTTP on loopback against one API process, on an anima with 10,000 memories.

A fresh deployment gets one anima bulk-loaded (:mod:`benchmarks.inject_data`: N memories, N/10
knowledge, provenance, 220 undistilled events), then one dream run (offline engine) distils the
pending events so the dream, identity and knowledge pages have something to show. The benchmark
signs in through the form like a browser, then fetches each page one request at a time from a
separate load process with the session cookie. The pack composer compiles on every request
(it never reads the snapshot cache), so its figure is a cold compile plus rendering.

Aim (recorded, not asserted): every page p50 < 200 ms at 10,000 memories.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from urllib.parse import quote

import httpx

from benchmarks.harness import Deployment, deployment
from benchmarks.inject import Measured, _measure, _prepare
from benchmarks.inject_data import QUERIES
from benchmarks.loadgen import Phase
from benchmarks.results import Section

TITLE = "web inspector page latency (one API process, signed-in session)"
AIM_MS = 200.0


@dataclass(frozen=True)
class Size:
    """Memories of the anima and requests per page."""

    memories: int
    requests: int


SIZES = {"tiny": Size(300, 5), "small": Size(10_000, 20), "full": Size(10_000, 60)}


def _sign_in(c: httpx.Client, api_key: str) -> str:
    """The ``Cookie`` header of a signed-in inspector session (via the sign-in form, as a browser)."""
    form = c.get("/ui/login")
    token = re.search(r'name="token" value="([^"]+)"', form.text)
    assert token, "sign-in form without its token"
    r = c.post("/ui/login", data={"api_key": api_key, "token": token.group(1)})
    assert r.status_code == 303, r.text
    return f"elephantasm_ui={c.cookies['elephantasm_ui']}"


def _dream(c: httpx.Client, anima: str) -> str:
    """Run one dream over the pending events and wait for it; returns the run id."""
    run = c.post("/api/dreams/trigger", json={"anima_id": anima}).json()["id"]
    deadline = time.monotonic() + 600
    while c.get(f"/api/dreams/sessions/{run}").json()["status"] == "running":
        if time.monotonic() > deadline:
            raise RuntimeError("dream run did not finish in 10 minutes")
        time.sleep(0.5)
    return run


def _first_id(c: httpx.Client, path: str, **params: str) -> str:
    return c.get(path, params={**params, "limit": "1"}).json()["items"][0]["id"]


def _pages(d: Deployment, anima: str, run: str) -> list[tuple[str, str]]:
    """(label, path) of every page measured."""
    with httpx.Client(base_url=d.base_url, headers=d.headers, timeout=120) as c:
        memory = _first_id(c, "/api/memories", anima_id=anima)
        knowledge = _first_id(c, "/api/knowledge", anima_id=anima)
        event = _first_id(c, "/api/events", anima_id=anima)
        cursor = c.get("/api/memories", params={"anima_id": anima, "limit": "50"}).json()["next_cursor"]
    a = f"/ui/animas/{anima}"
    return [
        ("animas", "/ui/animas"),
        ("anima overview", a),
        ("events, page 1", f"{a}/events"),
        ("events of one session", f"{a}/events?session_id=s7"),
        ("event", f"/ui/events/{event}"),
        ("memories, page 1", f"{a}/memories"),
        ("memories, page 2", f"{a}/memories?cursor={cursor}"),
        ("memories, state filter", f"{a}/memories?state=active"),
        ("memories, search", f"{a}/memories?q={quote(QUERIES[0])}"),
        ("memory", f"/ui/memories/{memory}"),
        ("knowledge", f"{a}/knowledge?superseded=true"),
        ("knowledge item + history", f"/ui/knowledge/{knowledge}"),
        ("identity versions + diff", f"{a}/identity"),
        ("dream runs", f"{a}/dreams"),
        ("dream run + journal", f"/ui/dreams/{run}"),
        ("pack composer, no query", f"{a}/pack"),
        ("pack composer, query", f"{a}/pack?query={quote(QUERIES[1])}&max_tokens=2000"),
    ]


def run(size: str) -> Section:
    """Load the anima, sign in, measure every page."""
    s = SIZES[size]
    with deployment() as d:
        anima, load_s = _prepare(d, s.memories)
        with httpx.Client(base_url=d.base_url, headers=d.headers, timeout=120) as c:
            run_id = _dream(c, anima)
        with httpx.Client(base_url=d.base_url, timeout=120) as c:
            cookie = _sign_in(c, d.api_key)
        runs: list[Measured] = []
        for label, path in _pages(d, anima, run_id):
            phase = Phase(
                host=d.host,
                port=d.port,
                path=path,
                requests=s.requests,
                concurrency=1,
                headers={"Cookie": cookie},
                expect_status=200,
                warmup=3,
            )
            runs.append(_measure(d, s.memories, label, phase))
        pg_version = d.pg_version
    worst = max(runs, key=lambda m: m.pct(0.5))
    notes = [
        (
            f"{s.memories:,} memories ({s.memories // 10:,} knowledge, 220 pending events distilled by one offline "
            f"dream run before measuring; loaded in {load_s:.0f} s)."
        ),
        (
            f"aim every page p50 < {AIM_MS:.0f} ms: {'met' if worst.pct(0.5) < AIM_MS else 'MISSED'} "
            f"(slowest: {worst.label}, p50 {worst.pct(0.5):.1f} ms)."
        ),
        (
            "one request at a time (concurrency 1, keep-alive HTTP/1.1, separate load process) with a signed-in "
            "session cookie; latencies include the HTTP round trip, the session check (one indexed read of the "
            "key per request) and rendering; lists are 50 rows a page; 'other CPU %' as in the inject section."
        ),
    ]
    rows = [
        [
            f"{m.memories:,}",
            m.label,
            f"{m.result.requests:,}",
            f"{m.pct(0.5):.1f}",
            f"{m.pct(0.95):.1f}",
            f"{m.result.latencies_ms[-1]:.1f}",
            f"{m.other_pct:.0f}",
        ]
        for m in runs
    ]
    headers = ["memories", "page", "requests", "p50 ms", "p95 ms", "max ms", "other CPU %"]
    return Section(
        name="ui", title=TITLE, headers=headers, rows=rows, notes=notes, environment={"PostgreSQL": pg_version}
    )
