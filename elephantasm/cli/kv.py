"""``elephantasm kv build|ls|export|import|verify|prune``: KV snapshots and memory packages of the
local model from the command line (same services as the API)."""

from __future__ import annotations

import argparse
import json
import uuid
from typing import Any

from rich.table import Table

from elephantasm.cli.context import console, with_runtime
from elephantasm.cli.listing import Column, field, print_listing, record_of
from elephantasm.cli.lookup import find_anima, find_org_id
from elephantasm.domain.kv.package import open_package
from elephantasm.ids import short_id
from elephantasm.runtime import Runtime
from elephantasm.services.kv import packages, rows, snapshots
from elephantasm.services.kv.prefix import pack_prompt

CERTIFICATE_MEASURES = "probes greedy_identical identical_rate token_agreement top1_agreement mean_kl max_kl grade"


def _print_certificate(cert: dict[str, Any]) -> None:
    table = Table("measure", "value", title="quality certificate (vs " + str(cert.get("reference")) + ")")
    for key in CERTIFICATE_MEASURES.split():
        table.add_row(key, str(cert.get(key)))
    console.print(table)


async def _build(rt: Runtime, args: argparse.Namespace) -> int:
    anima = await find_anima(rt, args.anima, args.org)
    pack = await pack_prompt(rt.chat_packs, anima.org_id, anima.id, args.query)
    status, row = await snapshots.build(rt.unit_of_work, rt.local, rt.clock, anima.org_id, anima.id, pack)
    assert row is not None
    console.print(
        f"{status}: snapshot {row.id} ({row.n_tokens} tokens, {row.bytes} bytes, pack {row.pack_fingerprint[:12]})"
    )
    return 0


SNAPSHOT_COLUMNS = [
    field("id", identifier=True),
    Column("anima", lambda r: short_id(r["anima_id"]), identifier=True),
    field("n_tokens", header="tokens"),
    field("bytes"),
    field("kv_type", header="kv"),
    field("source"),
    field("last_used_at", header="last used"),
]


async def _ls(rt: Runtime, args: argparse.Namespace) -> int:
    org_id = await find_org_id(rt, args.org)
    anima_id = (await find_anima(rt, args.anima, args.org)).id if args.anima else None
    async with rt.read_session() as session:
        found = await rows.list_for(session, org_id, anima_id, 1000)
    fields = ("id", "anima_id", "n_tokens", "bytes", "kv_type", "source", "last_used_at")
    records = [record_of(r, fields) for r in found]
    print_listing(console, records, SNAPSHOT_COLUMNS, args.json)
    return 0


async def _export(rt: Runtime, args: argparse.Namespace) -> int:
    org_id = await find_org_id(rt, args.org)
    sid = uuid.UUID(args.snapshot)
    blob = await packages.export_package(rt.read_session, rt.local, rt.secret, rt.clock, org_id, sid, args.probes)
    args.out.write_bytes(blob)
    console.print(f"wrote {args.out} ({len(blob)} bytes)")
    _print_certificate(open_package(blob, rt.secret)[1])
    return 0


async def _import(rt: Runtime, args: argparse.Namespace) -> int:
    anima = await find_anima(rt, args.anima, args.org)
    blob = args.file.read_bytes()
    row, manifest, cert = await packages.import_package(
        rt.unit_of_work, rt.local, rt.secret, anima.org_id, anima.id, blob
    )
    console.print(f"imported snapshot {row.id} ({row.n_tokens} tokens of {manifest.get('model_name')})")
    _print_certificate(cert)
    return 0


async def _verify(rt: Runtime, args: argparse.Namespace) -> int:
    org_id, sid = await find_org_id(rt, args.org), uuid.UUID(args.snapshot)
    cert = await packages.verify_snapshot(rt.read_session, rt.local, org_id, sid, args.probes)
    _print_certificate(cert)
    print(json.dumps(cert), flush=True)
    return 0 if cert["greedy_identical"] else 2


async def _prune(rt: Runtime, args: argparse.Namespace) -> int:
    org_id = await find_org_id(rt, args.org)
    store = rt.local.store
    budget = rt.local.budget_bytes if args.budget is None else args.budget
    async with rt.unit_of_work() as session:
        dead = await rows.purge_deleted_animas(session, store, org_id)
        evicted = await rows.evict(session, store, budget)
    console.print(f"removed {dead} snapshots of deleted animas; evicted {evicted} to stay within {budget} bytes")
    return 0


# The commands ``cli/parser.py`` names (``elephantasm kv build`` → ``build``, …).
build, ls, export, import_, verify, prune = map(with_runtime, (_build, _ls, _export, _import, _verify, _prune))
