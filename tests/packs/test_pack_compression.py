"""Packs go out gzipped to clients that accept it: compressed once per cached pack, same ETag, same JSON."""

from __future__ import annotations

import dataclasses
import gzip

import httpx
import pytest

from api.app import create_app
from elephantasm.domain.content_coding import accepts_gzip, gzip_bytes
from elephantasm.runtime import Runtime
from tests.conftest import Tenant
from tests.packs.helpers import extract, latest_url


@pytest.mark.parametrize(
    ("header", "ok"),
    [
        (None, False),
        ("", False),
        ("identity", False),
        ("br, deflate", False),
        ("gzip", True),
        ("GZIP", True),
        ("x-gzip", True),
        ("gzip, deflate, br, zstd", True),
        ("deflate, gzip;q=0.5", True),
        ("gzip;q=0", False),
        ("gzip; q=0.0", False),
        ("*", True),
        ("*;q=0", False),
        ("gzip;q=0, *", False),
        ("gzip;q=nonsense", False),
        ("gzip;q=1.5", False),
    ],
)
def test_accept_encoding_negotiation(header: str | None, ok: bool) -> None:
    assert accepts_gzip(header) is ok


def test_gzip_bytes_are_deterministic_and_round_trip() -> None:
    body = b'{"context": "' + b"the same pack " * 500 + b'"}'
    once = gzip_bytes(body)
    assert once == gzip_bytes(body) and gzip.decompress(once) == body and len(once) < len(body) // 10


async def _raw_get(client: httpx.AsyncClient, url: str, headers: dict[str, str]) -> tuple[httpx.Response, bytes]:
    """The response and its bytes as sent (httpx would otherwise decode gzip transparently)."""
    async with client.stream("GET", url, headers=headers) as r:
        return r, b"".join([chunk async for chunk in r.aiter_raw()])


async def _pack_anima(client: httpx.AsyncClient, tenant: Tenant, anima_id: str) -> None:
    for i in range(30):
        await extract(client, tenant, anima_id, f"Turn {i}: we talked about the Lisbon trip, the budget and the cat.")


async def test_gzip_pack_is_the_identity_pack_compressed_once(
    pclient: httpx.AsyncClient, pack_runtime: Runtime, tenant: Tenant, panima: dict
) -> None:
    await _pack_anima(pclient, tenant, panima["id"])
    url = latest_url(panima["id"])
    plain, plain_bytes = await _raw_get(pclient, url, {**tenant.headers, "Accept-Encoding": "identity"})
    assert plain.status_code == 200 and "content-encoding" not in plain.headers
    assert plain.headers["vary"] == "Accept-Encoding"
    lru = pack_runtime.pack_state.lru
    before = lru.bytes
    zipped, zipped_bytes = await _raw_get(pclient, url, {**tenant.headers, "Accept-Encoding": "gzip, deflate"})
    assert zipped.status_code == 200 and zipped.headers["content-encoding"] == "gzip"
    assert zipped.headers["vary"] == "Accept-Encoding" and zipped.headers["etag"] == plain.headers["etag"]
    assert gzip.decompress(zipped_bytes) == plain_bytes and len(zipped_bytes) < len(plain_bytes) // 2
    assert int(zipped.headers["content-length"]) == len(zipped_bytes)
    # The compressed copy is kept with the cached pack (and counted in its bytes), so later hits reuse it.
    assert lru.bytes == before + len(zipped_bytes)
    again, again_bytes = await _raw_get(pclient, url, {**tenant.headers, "Accept-Encoding": "gzip"})
    assert again_bytes == zipped_bytes and lru.bytes == before + len(zipped_bytes)
    # A refusal of gzip is honoured; a conditional request still answers 304 with the same ETag.
    refused, refused_bytes = await _raw_get(pclient, url, {**tenant.headers, "Accept-Encoding": "gzip;q=0, *"})
    assert "content-encoding" not in refused.headers and refused_bytes == plain_bytes
    etag = plain.headers["etag"]
    cond = await pclient.get(url, headers={**tenant.headers, "Accept-Encoding": "gzip", "If-None-Match": etag})
    assert cond.status_code == 304 and cond.content == b"" and cond.headers["etag"] == etag


async def test_compile_endpoint_gzips_too_and_sdk_style_clients_decode_it(
    pclient: httpx.AsyncClient, tenant: Tenant, panima: dict
) -> None:
    await _pack_anima(pclient, tenant, panima["id"])
    body = {"anima_id": panima["id"], "query": "what about the cat?"}
    # httpx (what the SDKs use) asks for gzip by default and decodes it.
    r = await pclient.post("/api/packs/compile", json=body, headers=tenant.headers)
    assert r.status_code == 200 and r.headers["content-encoding"] == "gzip"
    plain = await pclient.post(
        "/api/packs/compile", json=body, headers={**tenant.headers, "Accept-Encoding": "identity"}
    )
    assert "content-encoding" not in plain.headers and plain.content == r.content and "cat" in r.json()["context"]


async def test_null_pack_is_never_compressed(pclient: httpx.AsyncClient, tenant: Tenant, panima: dict) -> None:
    r, raw = await _raw_get(pclient, latest_url(panima["id"]), {**tenant.headers, "Accept-Encoding": "gzip"})
    assert r.status_code == 200 and raw == b"null" and "content-encoding" not in r.headers


async def test_compression_can_be_turned_off(pack_runtime: Runtime, tenant: Tenant) -> None:
    settings = pack_runtime.settings.model_copy(update={"compress_packs": False})
    rt = dataclasses.replace(pack_runtime, settings=settings)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(rt)), base_url="http://test") as c:
        anima = (await c.post("/api/animas", json={"name": "plain"}, headers=tenant.headers)).json()
        await _pack_anima(c, tenant, anima["id"])
        r, raw = await _raw_get(c, latest_url(anima["id"]), {**tenant.headers, "Accept-Encoding": "gzip"})
    assert r.status_code == 200 and "content-encoding" not in r.headers and raw.startswith(b"{")
