"""``POST /api/animas/import`` holds every line to the live API's rules, before anything is written
(issue 28, items 5-7 and 11): JSON limits, timestamps, sizes, values an anima holds once, and a
trailer that tells a whole export from a cut or altered one."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.conftest import Tenant
from tests.hardening.helpers import deep_json, error, retrailed

NDJSON = {"content-type": "application/x-ndjson"}


@pytest.fixture
async def exported(client: httpx.AsyncClient, tenant: Tenant) -> list[str]:
    """The lines of an export of an anima with six events (header first, trailer last)."""
    anima = (await client.post("/api/animas", json={"name": "source"}, headers=tenant.headers)).json()
    events = [
        {"anima_id": anima["id"], "event_type": "message.in", "content": f"turn {i}", "dedupe_key": f"k{i}"}
        for i in range(6)
    ]
    r = await client.post("/api/events/batch", json={"events": events}, headers=tenant.headers)
    assert r.status_code == 201, r.text
    r = await client.get(f"/api/animas/{anima['id']}/export", headers=tenant.headers)
    assert r.status_code == 200, r.text
    return r.text.splitlines(keepends=True)


async def _import(client: httpx.AsyncClient, who: Tenant, body: str | bytes, **params: str) -> httpx.Response:
    return await client.post("/api/animas/import", content=body, params=params, headers=who.headers | NDJSON)


async def _names(client: httpx.AsyncClient, who: Tenant) -> list[str]:
    return [a["name"] for a in (await client.get("/api/animas", headers=who.headers)).json()["items"]]


def _with(line: str, **fields: object) -> str:
    return json.dumps(json.loads(line) | fields)


async def test_an_export_imports_and_its_trailer_counts_its_lines(
    client: httpx.AsyncClient, exported: list[str], other_tenant: Tenant
) -> None:
    trailer = json.loads(exported[-1])
    assert trailer["kind"] == "trailer" and trailer["counts"]["event"] == 6 and trailer["counts"]["anima"] == 1
    assert len(trailer["sha256"]) == 64
    r = await _import(client, other_tenant, "".join(exported))
    assert r.status_code == 201, r.text


async def test_a_cut_export_is_refused_unless_partial(
    client: httpx.AsyncClient, exported: list[str], other_tenant: Tenant
) -> None:
    cut = "".join(exported[:4])  # the header and three of six events, no trailer
    assert "partial=true" in error(await _import(client, other_tenant, cut), 422)
    assert "trailer" in error(await _import(client, other_tenant, cut), 422)
    # A trailer that announces more lines than the file holds: what is missing is named.
    short = "".join([*exported[:4], exported[-1]])
    assert "6 event line(s) announced, 3 found" in error(await _import(client, other_tenant, short), 422)
    # A line changed (still valid): the checksum tells.
    altered = "".join([exported[0], _with(exported[1], content="changed") + "\n", *exported[2:]])
    assert "SHA-256" in error(await _import(client, other_tenant, altered), 422)
    # Something after the trailer.
    after = "".join([*exported, exported[1]])
    assert "after the trailer" in error(await _import(client, other_tenant, after), 422)
    assert await _names(client, other_tenant) == []
    r = await _import(client, other_tenant, cut, partial="true", name="partial copy")
    assert r.status_code == 201, r.text
    events = await client.get("/api/events", params={"anima_id": r.json()["id"]}, headers=other_tenant.headers)
    assert [e["content"] for e in events.json()["items"]] == ["turn 0", "turn 1", "turn 2"]


async def test_json_the_api_refuses_is_refused_on_every_import_line(
    client: httpx.AsyncClient, exported: list[str], other_tenant: Tenant, settings
) -> None:  # type: ignore[no-untyped-def]
    header, event = exported[0].rstrip("\n"), exported[1].rstrip("\n")
    huge_int = event[:-1] + ', "meta": {"n": ' + "7" * 5000 + "}}"
    deep_meta = event[:-1].encode() + b', "meta": ' + deep_json(5000) + b"}"
    too_deep = event[:-1].encode() + b', "meta": ' + deep_json(settings.max_json_depth + 1) + b"}"
    deep_header = header[:-1].encode() + b', "meta": ' + deep_json(settings.max_json_depth + 1) + b"}"
    too_big = _with(event, meta={"blob": "x" * (settings.max_json_bytes + 1)})
    for case, line in {
        "5,000-digit integer": huge_int.encode(),
        "5,000-deep nesting": deep_meta,
        "deeper than max_json_depth": too_deep,
        "bigger than max_json_bytes": too_big.encode(),
    }.items():
        body = header.encode() + b"\n" + line + b"\n"
        detail = error(await _import(client, other_tenant, body, partial="true"), 422)
        assert "line 2" in detail, (case, detail)
    detail = error(await _import(client, other_tenant, deep_header + b"\n", partial="true"), 422)
    assert "line 1" in detail and "max_json_depth" in detail
    assert await _names(client, other_tenant) == []


async def test_the_live_input_rules_hold_for_every_import_line(
    client: httpx.AsyncClient, exported: list[str], other_tenant: Tenant, settings
) -> None:  # type: ignore[no-untyped-def]
    header, event, trailer = exported[0], exported[1], exported[-1]
    cases = {
        "naive occurred_at": [header, _with(event, occurred_at="2026-01-01T12:00:00")],
        "year 1 occurred_at": [header, _with(event, occurred_at="0001-01-01T00:00:00Z")],
        "year 9999 created_at": [header, _with(event, created_at="9999-12-31T00:00:00Z")],
        "naive header created_at": [_with(header, created_at="2026-01-01T00:00:00"), event],
        "year 1 header last_event_at": [_with(header, last_event_at="0001-01-01T00:00:00+00:00")],
        "occurred_at in the future": [header, _with(event, occurred_at="2999-01-01T00:00:00Z")],
        "NUL in content": [header, _with(event, content="a\u0000b")],
        "blank content": [header, _with(event, content="   ")],
        "header name too long": [_with(header, name="n" * 201)],
        "version true": [
            header,
            json.dumps(
                {
                    "kind": "identity_version",
                    "version": True,
                    "created_at": "2026-01-01T00:00:00Z",
                }
            ),
        ],
    }
    for case, lines in cases.items():
        detail = error(await _import(client, other_tenant, retrailed(lines)), 422)
        assert "line" in detail, (case, detail)
    big = _with(event, content="x" * (settings.max_event_bytes + 1))
    detail = error(await _import(client, other_tenant, retrailed([header, big])), 413)
    assert "line 2" in detail and str(settings.max_event_bytes) in detail
    document = (await client.get("/schema/openapi.json")).json()
    assert "413" in document["paths"]["/api/animas/import"]["post"]["responses"]  # the answer is documented
    assert json.loads(trailer)["kind"] == "trailer"
    assert await _names(client, other_tenant) == []


async def test_values_an_anima_holds_once_are_named_not_a_409(
    client: httpx.AsyncClient, exported: list[str], other_tenant: Tenant
) -> None:
    """Two events with one dedupe_key (or two identity versions with one number) can never be
    written: a 422 naming both lines, not a 409 suggesting a retry."""
    header, first, second = exported[0], exported[1], exported[2]
    twin = _with(second, dedupe_key=json.loads(first)["dedupe_key"])
    detail = error(await _import(client, other_tenant, retrailed([header, first, twin])), 422)
    assert "dedupe_key 'k0'" in detail and "line 3" in detail and "line 2" in detail
    assert "retry" not in detail
    version = json.dumps({"kind": "identity_version", "version": 1, "created_at": "2026-01-01T00:00:00Z"})
    detail = error(await _import(client, other_tenant, retrailed([header, version, version])), 422)
    assert "version 1" in detail and "line 2" in detail
    assert await _names(client, other_tenant) == []
