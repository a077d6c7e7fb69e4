"""``elephantasm keys …`` and ``elephantasm animas …``."""

from __future__ import annotations

import argparse
from datetime import timedelta

from elephantasm.cli.context import console, with_runtime
from elephantasm.cli.listing import Column, field, print_listing, record_of
from elephantasm.domain.keys import KeyScope
from elephantasm.ids import short_id
from elephantasm.runtime import Runtime
from elephantasm.schemas.animas import AnimaCreate
from elephantasm.services import animas as anima_svc
from elephantasm.services import keys as key_svc


@with_runtime
async def keys_create(rt: Runtime, args: argparse.Namespace) -> int:
    """Issue a key and print it once."""
    expires = rt.clock() + timedelta(days=args.expires_days) if args.expires_days else None
    async with rt.unit_of_work() as session:
        issued = await key_svc.create_key(session, rt.secret, args.org, args.name, expires, KeyScope(args.scope))
    console.print(
        f"Created {issued.scope} key {issued.prefix}… (id {issued.id}) for org '{issued.org_name}'. It is shown once:"
    )
    print(f"export ELEPHANTASM_API_KEY={issued.key}")
    return 0


KEY_COLUMNS = [
    Column("id", lambda k: short_id(k["id"]), identifier=True),
    field("org"),
    Column("prefix", lambda k: k["prefix"] + "…", identifier=True),
    field("name"),
    field("scope"),
    field("created_at", header="created"),
    field("expires_at", header="expires"),
    Column("revoked", lambda k: "yes" if k["revoked_at"] else ""),
]
ANIMA_COLUMNS = [
    field("id", identifier=True),
    field("name"),
    field("state_version", header="version"),
    field("last_event_at", header="last event"),
    field("created_at", header="created"),
]


@with_runtime
async def keys_list(rt: Runtime, args: argparse.Namespace) -> int:
    """List keys (prefixes only: full keys are never stored); the id column shows short ids."""
    async with rt.read_session() as session:
        if args.org is not None:
            await key_svc.get_org(session, args.org)
        rows = await key_svc.list_keys(session, args.org)
    fields = ("id", "prefix", "name", "scope", "created_at", "expires_at", "revoked_at", "last_used_at")
    records = [{**record_of(key, fields), "org": org_name} for key, org_name in rows]
    print_listing(console, records, KEY_COLUMNS, args.json)
    return 0


@with_runtime
async def keys_revoke(rt: Runtime, args: argparse.Namespace) -> int:
    """Revoke a key by id or display prefix."""
    async with rt.unit_of_work() as session:
        key = await key_svc.revoke_key(session, args.key)
    console.print(f"Revoked key {key.prefix}… ({key.id}).")
    return 0


@with_runtime
async def animas_create(rt: Runtime, args: argparse.Namespace) -> int:
    """Create an anima in an existing org and print its id."""
    async with rt.unit_of_work() as session:
        org = await key_svc.get_org(session, args.org)
        anima = await anima_svc.create_anima(session, org.id, AnimaCreate(name=args.name, description=args.description))
    console.print(f"Created anima '{anima.name}'.")
    print(anima.id)
    return 0


@with_runtime
async def animas_list(rt: Runtime, args: argparse.Namespace) -> int:
    """List an org's animas (full ids: the other commands take them)."""
    async with rt.read_session() as session:
        org = await key_svc.get_org(session, args.org)
        rows, _ = await anima_svc.list_animas(session, org.id, 1000, None)
    fields = ("id", "name", "description", "state_version", "last_event_at", "created_at")
    print_listing(console, [record_of(a, fields) for a in rows], ANIMA_COLUMNS, args.json)
    return 0
