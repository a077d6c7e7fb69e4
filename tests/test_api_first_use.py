"""The API and the inspector as a new user meets them (issue 29): the README's pack one-liner on an
empty anima, replays that answer alike, a browser at ``/``, short ids that tell events apart, and a
banner that names the inspector."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import httpx

from api.ui.render import environment
from elephantasm.cli.banner import listening_lines
from elephantasm.ids import uuid7
from elephantasm.settings import Settings
from tests.conftest import Tenant
from tests.support.servers import REPO_ROOT

ONE_LINER = re.compile(r"python3 -c '(import json,sys; print\(.*\))'$", re.MULTILINE)


def _readme_one_liner() -> str:
    found = ONE_LINER.findall((REPO_ROOT / "README.md").read_text(encoding="utf-8"))
    assert len(found) == 1, found
    return found[0]


async def test_readme_one_liner_prints_a_pack_and_survives_an_empty_anima(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict
) -> None:
    """The API answers ``null`` for an anima with nothing recorded; the one-liner prints nothing then."""
    code = _readme_one_liner()
    url = f"/api/animas/{anima['id']}/memory-packs/latest"
    empty = (await client.get(url, headers=tenant.headers)).text
    assert empty == "null"
    done = subprocess.run([sys.executable, "-c", code], input=empty, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "\n", done.stderr

    event = {"anima_id": anima["id"], "event_type": "message.in", "content": "I keep bees on the roof"}
    assert (await client.post("/api/events", json=event, headers=tenant.headers)).status_code == 201
    pack = (await client.get(url, headers=tenant.headers)).text
    done = subprocess.run([sys.executable, "-c", code], input=pack, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == json.loads(pack)["context"] + "\n", done.stderr


async def test_a_batch_replay_answers_200_like_a_single_replay(
    client: httpx.AsyncClient, tenant: Tenant, anima: dict
) -> None:
    events = [
        {"anima_id": anima["id"], "event_type": "message.in", "content": f"e{i}", "dedupe_key": f"k{i}"}
        for i in range(3)
    ]
    first = await client.post("/api/events/batch", json={"events": events}, headers=tenant.headers)
    assert first.status_code == 201 and first.json()["created"] == 3
    again = await client.post("/api/events/batch", json={"events": events}, headers=tenant.headers)
    assert again.status_code == 200 and again.json()["created"] == 0
    assert (await client.post("/api/events", json=events[0], headers=tenant.headers)).status_code == 200
    partly = [*events, {**events[0], "content": "new", "dedupe_key": "k-new"}]
    mixed = await client.post("/api/events/batch", json={"events": partly}, headers=tenant.headers)
    assert mixed.status_code == 201 and mixed.json()["created"] == 1
    responses = (await client.get("/schema/openapi.json")).json()["paths"]["/api/events/batch"]["post"]["responses"]
    assert {"200", "201"} <= set(responses)


async def test_a_browser_at_the_root_goes_to_the_inspector(client: httpx.AsyncClient) -> None:
    page = await client.get("/", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert page.status_code == 303 and page.headers["location"] == "/ui"
    api = await client.get("/", headers={"Accept": "application/json"})
    assert api.status_code == 404 and "/api" in api.json()["detail"] and "/ui" in api.json()["detail"]


def test_the_inspector_shows_the_distinguishing_tail_of_ids() -> None:
    """Time-ordered ids of one minute share their first 8 digits; the ``short`` filter shows the last 8."""
    ids = [uuid7() for _ in range(20)]
    shown = [environment().from_string("{{ i|short }}").render(i=i) for i in ids]
    assert len(set(shown)) == 20 and shown[0] == ids[0].hex[-8:]
    assert environment().from_string("{{ i|short }}").render(i=None) == "—"


def test_the_banner_names_the_inspector() -> None:
    lines = listening_lines(Settings(host="127.0.0.1", port=8123))
    assert "inspector: http://127.0.0.1:8123/ui" in lines
