"""The benchmark's HTTP client for a running Elephantasm server (plain httpx, no SDK).

Only the public API is used: animas, event batches (dedupe_key = the dataset's event id), the
dreamer trigger and run status, and ``memory-packs/latest``.
"""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from typing import Any

import httpx

from benchmarks.quality.dataset import Conversation

BATCH = 500
PACK_LISTS = ("session_memories", "long_term_memories", "knowledge")


class DreamError(RuntimeError):
    """A dream run failed or did not finish in time."""


class MemoryClient:
    """Synchronous calls against one server with one API key."""

    def __init__(self, base_url: str, headers: dict[str, str], timeout: float = 120.0) -> None:
        self.http = httpx.Client(base_url=base_url, headers=headers, timeout=timeout)

    def close(self) -> None:
        """Close the connection pool."""
        self.http.close()

    def _ok(self, response: httpx.Response) -> Any:
        if response.status_code >= 400:
            raise RuntimeError(
                f"{response.request.method} {response.request.url} → {response.status_code}: {response.text[:500]}"
            )
        return response.json()

    def create_anima(self, name: str) -> str:
        """A new anima's id."""
        return str(self._ok(self.http.post("/api/animas", json={"name": name}))["id"])

    def ingest(self, anima_id: str, conversation: Conversation, shift: timedelta = timedelta(0)) -> dict[str, str]:
        """Record every turn as an event; returns server event id → dataset event id.

        Users' turns are ``message.in``, the assistant's ``message.out``; times move by ``shift``.
        The batch response lists stored events in request order, which gives the mapping.
        """
        events = [
            {
                "anima_id": anima_id,
                "event_type": "message.in" if turn.role == "user" else "message.out",
                "role": turn.role,
                "content": turn.content,
                **({"author": turn.author} if turn.author else {}),
                "session_id": session.session_id,
                "occurred_at": (datetime.fromisoformat(turn.occurred_at) + shift).isoformat(),
                "dedupe_key": turn.event_id,
            }
            for session in conversation.sessions
            for turn in session.turns
        ]
        mapping: dict[str, str] = {}
        for start in range(0, len(events), BATCH):
            chunk = events[start : start + BATCH]
            items = self._ok(self.http.post("/api/events/batch", json={"events": chunk}))["items"]
            for sent, stored in zip(chunk, items, strict=True):
                mapping[str(stored["id"])] = sent["dedupe_key"]
        return mapping

    def pending(self, anima_id: str) -> int:
        """Events of the anima not distilled yet."""
        pending, cursor = 0, None
        while True:
            params: dict[str, Any] = {"anima_id": anima_id, "limit": 1000}
            if cursor:
                params["cursor"] = cursor
            page = self._ok(self.http.get("/api/events", params=params))
            pending += sum(1 for e in page["items"] if e.get("distilled_at") is None)
            cursor = page.get("next_cursor")
            if not cursor:
                return pending

    def trigger(self, anima_id: str) -> str:
        """Start a dream run (waiting out a run already in progress); returns its id."""
        for _ in range(600):
            response = self.http.post("/api/dreams/trigger", json={"anima_id": anima_id})
            if response.status_code not in (409, 429):
                run = self._ok(response)
                return str(run.get("id") or run.get("run_id"))
            time.sleep(0.5)
        raise DreamError(f"anima {anima_id}: could not start a dream run")

    def wait_run(self, run_id: str, timeout: float) -> dict[str, Any]:
        """Poll a run until it leaves ``running``; DreamError if it fails or times out."""
        deadline = time.monotonic() + timeout
        delay = 0.05
        while time.monotonic() < deadline:
            run = self._ok(self.http.get(f"/api/dreams/sessions/{run_id}"))
            if run.get("status") == "completed":
                return run
            if run.get("status") == "failed":
                raise DreamError(f"dream run {run_id} failed: {run.get('error')}")
            time.sleep(delay)
            delay = min(1.0, delay * 1.5)
        raise DreamError(f"dream run {run_id} still running after {timeout:.0f} s")

    def dream(self, anima_id: str, timeout: float = 1800, max_runs: int = 20) -> list[dict[str, Any]]:
        """Dream until nothing is pending (a run may cap how many events it takes); returns the runs."""
        runs = []
        for _ in range(max_runs):
            runs.append(self.wait_run(self.trigger(anima_id), timeout))
            if self.pending(anima_id) == 0:
                return runs
        raise DreamError(f"anima {anima_id}: events still pending after {max_runs} runs")

    def latest_pack(
        self, anima_id: str, query: str, max_tokens: int, encoding: str, preset: str | None = None
    ) -> dict[str, Any] | None:
        """``GET /api/animas/{id}/memory-packs/latest`` (None for an anima with nothing recorded)."""
        params: dict[str, Any] = {"query": query, "max_tokens": max_tokens, "encoding": encoding}
        if preset:
            params["preset"] = preset
        return self._ok(self.http.get(f"/api/animas/{anima_id}/memory-packs/latest", params=params))

    def compile_pack(
        self, anima_id: str, query: str, max_tokens: int, encoding: str, overrides: dict[str, Any]
    ) -> dict[str, Any]:
        """``POST /api/packs/compile``: the default preset with explicit overrides (weights, limits…)."""
        body = {"anima_id": anima_id, "query": query, "max_tokens": max_tokens, "encoding": encoding, **overrides}
        return self._ok(self.http.post("/api/packs/compile", json=body))


def cited_events(pack: dict[str, Any] | None, id_map: dict[str, str]) -> set[str]:
    """Dataset event ids in the union of a pack's item provenance (server ids mapped back)."""
    if not pack:
        return set()
    content = pack.get("content") or {}
    return {
        id_map[str(e)]
        for name in PACK_LISTS
        for item in content.get(name) or []
        for e in item.get("provenance") or []
        if str(e) in id_map
    }
