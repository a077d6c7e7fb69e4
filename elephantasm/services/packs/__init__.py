"""Memory packs (inject): candidates, compile, snapshot cache, recalls, served-pack history."""

from elephantasm.services.packs.compiler import CompiledPack, compile_pack
from elephantasm.services.packs.deps import PackDeps
from elephantasm.services.packs.keys import PackRequest
from elephantasm.services.packs.service import Served, build_request, compile_now, etag_for, etag_matches, latest
from elephantasm.services.packs.state import PackState
from elephantasm.services.packs.store import get_pack, list_packs

__all__ = [
    "CompiledPack",
    "PackDeps",
    "PackRequest",
    "PackState",
    "Served",
    "build_request",
    "compile_now",
    "compile_pack",
    "etag_for",
    "etag_matches",
    "get_pack",
    "latest",
    "list_packs",
]
