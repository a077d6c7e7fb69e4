"""``elephantasm keys …`` and ``elephantasm animas …``."""

from __future__ import annotations

import argparse
from datetime import timedelta

from rich.table import Table

from elephantasm.cli.context import cli_runtime, console, err_console
from elephantasm.domain.errors import NotFoundError
from elephantasm.domain.keys import KeyScope
from elephantasm.schemas.animas import AnimaCreate
from elephantasm.services import animas as anima_svc
from elephantasm.services import keys as key_svc
from elephantasm.settings import Settings


async def keys_create(args: argparse.Namespace, settings: Settings) -> int:
    """Issue a key and print it once."""
    async with cli_runtime(settings) as rt:
        expires = rt.clock() + timedelta(days=args.expires_days) if args.expires_days else None
        async with rt.unit_of_work() as session:
            issued = await key_svc.create_key(session, rt.secret, args.org, args.name, expires, KeyScope(args.scope))
    console.print(
        f"Created {issued.scope} key {issued.prefix}… (id {issued.id}) for org '{issued.org_name}'. It is shown once:"
    )
    print(f"export ELEPHANTASM_API_KEY={issued.key}")
    return 0


async def keys_list(args: argparse.Namespace, settings: Settings) -> int:
    """List keys (prefixes only: full keys are never stored)."""
    async with cli_runtime(settings) as rt, rt.read_session() as session:
        rows = await key_svc.list_keys(session, args.org)
    table = Table("id", "org", "prefix", "name", "scope", "created", "expires", "revoked")
    for key, org_name in rows:
        table.add_row(
            str(key.id),
            org_name,
            key.prefix + "…",
            key.name or "",
            key.scope,
            f"{key.created_at:%Y-%m-%d %H:%M}",
            f"{key.expires_at:%Y-%m-%d}" if key.expires_at else "",
            "yes" if key.revoked_at else "",
        )
    console.print(table)
    return 0


async def keys_revoke(args: argparse.Namespace, settings: Settings) -> int:
    """Revoke a key by id or display prefix."""
    async with cli_runtime(settings) as rt:
        try:
            async with rt.unit_of_work() as session:
                key = await key_svc.revoke_key(session, args.key)
        except NotFoundError as exc:
            err_console.print(f"[red]{exc.detail}[/red]")
            return 1
    console.print(f"Revoked key {key.prefix}… ({key.id}).")
    return 0


async def animas_create(args: argparse.Namespace, settings: Settings) -> int:
    """Create an anima in an org (created if new) and print its id."""
    async with cli_runtime(settings) as rt, rt.unit_of_work() as session:
        org = await key_svc.get_or_create_org(session, args.org)
        anima = await anima_svc.create_anima(session, org.id, AnimaCreate(name=args.name, description=args.description))
    console.print(f"Created anima '{anima.name}'.")
    print(anima.id)
    return 0


async def animas_list(args: argparse.Namespace, settings: Settings) -> int:
    """List an org's animas."""
    async with cli_runtime(settings) as rt, rt.read_session() as session:
        org = await key_svc.get_or_create_org(session, args.org)
        rows, _ = await anima_svc.list_animas(session, org.id, 1000, None)
    table = Table("id", "name", "state_version", "last event", "created")
    for a in rows:
        table.add_row(
            str(a.id),
            a.name,
            str(a.state_version),
            f"{a.last_event_at:%Y-%m-%d %H:%M}" if a.last_event_at else "",
            f"{a.created_at:%Y-%m-%d %H:%M}",
        )
    console.print(table)
    return 0
