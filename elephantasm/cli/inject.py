"""``elephantasm inject ANIMA``: print the pack an agent would get now, and what each layer costs."""

from __future__ import annotations

import argparse
import json

from rich.table import Table

from elephantasm.cli.context import console, with_runtime
from elephantasm.cli.lookup import find_anima
from elephantasm.runtime import Runtime
from elephantasm.services import packs as pack_svc

_LAYER_NAMES = {
    "identity": ("identity", None),
    "knowledge": ("knowledge", "knowledge"),
    "long_term": ("long-term memories", "long_term_memories"),
    "session": ("current session", "session_memories"),
    "temporal": ("temporal context", None),
}


def _table(pack: dict) -> Table:
    table = Table(
        "layer",
        "items",
        "tokens",
        title=f"{pack['token_count']} / {pack['max_tokens']} tokens "
        f"({pack['encoding']}, preset {pack['preset_name']}, fingerprint {pack['fingerprint'][:12]})",
    )
    content = pack["content"]
    for key, (label, items_key) in _LAYER_NAMES.items():
        tokens = pack["layer_tokens"].get(key, 0)
        count = len(content[items_key]) if items_key else int(bool(tokens))
        table.add_row(label, str(count), str(tokens))
    table.add_row("total (with separators)", "", str(pack["token_count"]))
    return table


@with_runtime
async def inject(rt: Runtime, args: argparse.Namespace) -> int:
    """Compile (or fetch from the cache) the anima's pack; print the prompt, then the token table."""
    anima = await find_anima(rt, args.anima, args.org)
    deps = rt.packs
    req = pack_svc.build_request(
        deps,
        anima.org_id,
        anima.id,
        query=args.query,
        preset=args.preset,
        max_tokens=args.max_tokens,
        encoding=args.encoding,
        session_id=args.session,
    )
    served = await pack_svc.latest(deps, req)
    if served.followup:
        await served.followup()
    pack = json.loads(served.body)
    if pack is None:
        console.print("Nothing recorded for this anima yet (inject returns null).")
        return 0
    print(pack["context"], flush=True)
    print(flush=True)
    console.print(_table(pack))
    return 0
