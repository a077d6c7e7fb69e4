"""Pack operations and the conditional-inject cache (ETag / If-None-Match → 304). No I/O."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..exceptions import ElephantasmError
from ..models import MemoryPack
from .request import Operation, RawResponse, RequestSpec, json_body, path_id, query_params
from .response import parse_model


@dataclass(frozen=True)
class PackKey:
    """Everything that selects a pack on ``latest``; one cache entry per key."""

    anima_id: str
    query: str | None
    preset: str | None
    max_tokens: int | None
    encoding: str | None


@dataclass(frozen=True)
class PackResult:
    """Outcome of a ``latest`` call: the pack (None for a brand-new anima) and its ETag."""

    pack: MemoryPack | None
    etag: str | None = None
    not_modified: bool = False


class PackCache:
    """A small LRU of the last pack per ``PackKey``, so a repeat inject can ask for a 304."""

    def __init__(self, maxsize: int = 128) -> None:
        self._maxsize = maxsize
        self._items: OrderedDict[PackKey, PackResult] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: PackKey) -> PackResult | None:
        """The remembered result for ``key``, if any."""
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
            return hit

    def remember(self, key: PackKey, result: PackResult) -> None:
        """Store a result that has an ETag; forget the key when there is no pack or no ETag."""
        with self._lock:
            if result.pack is None or not result.etag:
                self._items.pop(key, None)
                return
            self._items[key] = result
            self._items.move_to_end(key)
            while len(self._items) > self._maxsize:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


def _parse_latest(cached: PackResult | None) -> Callable[[RawResponse], PackResult]:
    def parse(raw: RawResponse) -> PackResult:
        if raw.status == 304:
            if cached is None:
                raise ElephantasmError("Server answered 304 to an unconditional request", 304)
            return PackResult(cached.pack, cached.etag, not_modified=True)
        body = raw.json()
        if body is None:
            return PackResult(None)
        return PackResult(MemoryPack.model_validate(body), raw.headers.get("etag"))

    return parse


def latest_pack(key: PackKey, cached: PackResult | None = None) -> Operation[PackResult]:
    """``GET /api/animas/{id}/memory-packs/latest``, conditional on ``cached``'s ETag if given."""
    params = query_params(query=key.query, preset=key.preset, max_tokens=key.max_tokens, encoding=key.encoding)
    headers = {"If-None-Match": cached.etag} if cached is not None and cached.etag else {}
    path = f"/api/animas/{path_id(key.anima_id)}/memory-packs/latest"
    return Operation(RequestSpec("GET", path, params=params, headers=headers), _parse_latest(cached))


def compile_pack(
    anima_id: str,
    *,
    query: str | None = None,
    preset: str | None = None,
    max_tokens: int | None = None,
    encoding: str | None = None,
    **options: Any,
) -> Operation[MemoryPack]:
    """``POST /api/packs/compile``: compile a fresh pack (extra ``options`` go into the body)."""
    body = json_body(anima_id=anima_id, query=query, preset=preset, max_tokens=max_tokens, encoding=encoding, **options)
    return Operation(RequestSpec("POST", "/api/packs/compile", json=body), parse_model(MemoryPack))
