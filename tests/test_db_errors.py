"""Database errors become domain errors in one place (``elephantasm/db/errors.py``), for writes
and reads alike, with details that name the constraint but never the values."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text

from elephantasm.domain.errors import ConflictError, ValidationError
from elephantasm.runtime import Runtime
from tests.conftest import Tenant


async def test_integrity_and_data_errors_map_to_domain_errors(runtime: Runtime, tenant: Tenant) -> None:
    secret = f"secret-{uuid.uuid4().hex}"
    with pytest.raises(ConflictError) as unique:
        async with runtime.unit_of_work() as session:
            await session.execute(
                text("INSERT INTO orgs (id, name) VALUES (:id, :n)"), {"id": uuid.uuid4(), "n": secret}
            )
            await session.execute(
                text("INSERT INTO orgs (id, name) VALUES (:id, :n)"), {"id": uuid.uuid4(), "n": secret}
            )
    assert "orgs_name_key" in unique.value.detail and secret not in unique.value.detail
    with pytest.raises(ConflictError) as missing:
        async with runtime.unit_of_work() as session:
            await session.execute(
                text("INSERT INTO animas (id, org_id, name) VALUES (:id, :org, 'x')"),
                {"id": uuid.uuid4(), "org": uuid.uuid4()},
            )
    assert "no longer exists" in missing.value.detail
    with pytest.raises(ValidationError):
        async with runtime.unit_of_work() as session:
            await session.execute(text("INSERT INTO orgs (id, name) VALUES (:id, NULL)"), {"id": uuid.uuid4()})
    with pytest.raises(ValidationError) as data:
        async with runtime.read_session() as session:
            await session.execute(text("SELECT CAST(:v AS integer)"), {"v": secret})
    assert secret not in str(data.value.detail)
    async with runtime.read_session() as session:  # the pool is fine afterwards
        assert (await session.execute(text("SELECT 1"))).scalar() == 1
