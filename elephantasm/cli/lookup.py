"""Finding what a command line names: an org by name, an anima by id or by name within its org."""

from __future__ import annotations

import uuid

from sqlalchemy import select
from sqlmodel import col

from elephantasm.db.models import Anima
from elephantasm.domain.errors import NotFoundError, ValidationError
from elephantasm.runtime import Runtime
from elephantasm.services import keys as key_svc

NAMESAKES_SHOWN = 10


async def find_org_id(rt: Runtime, name: str) -> uuid.UUID:
    """The id of the org called ``name``; an unknown name is an error listing the orgs."""
    async with rt.read_session() as session:
        return (await key_svc.get_org(session, name)).id


async def find_anima(rt: Runtime, ref: str, org_name: str | None) -> Anima:
    """The live anima ``ref`` names: an id (within ``org_name``, or any org when it is None) or a
    name within ``org_name``. An unknown org is an error listing the orgs; a name several animas
    share is an error listing their ids (never a silent pick of one)."""
    async with rt.read_session() as session:
        stmt = select(Anima).where(col(Anima.deleted_at).is_(None))
        where = ""
        if org_name is not None:
            org = await key_svc.get_org(session, org_name)
            stmt = stmt.where(col(Anima.org_id) == org.id)
            where = f" in org {org_name!r}"
        try:
            stmt = stmt.where(col(Anima.id) == uuid.UUID(ref))
        except ValueError:
            if org_name is None:
                raise ValidationError(f"anima {ref!r} is not an id: name its org with --org") from None
            stmt = stmt.where(col(Anima.name) == ref)
        found = list((await session.execute(stmt.order_by(col(Anima.created_at)).limit(NAMESAKES_SHOWN))).scalars())
    if not found:
        raise NotFoundError(f"anima {ref!r} not found{where}")
    if len(found) > 1:
        ids = ", ".join(str(a.id) for a in found)
        raise ValidationError(f"several animas are named {ref!r}{where}: {ids}; pass the id of one")
    return found[0]
