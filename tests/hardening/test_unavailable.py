"""Which errors mean "the database is unavailable" (503) and which are the server's own fault (500)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import asyncpg
import pytest

from elephantasm.db.errors import is_unavailable


async def test_driver_connection_failure_is_unavailable() -> None:
    # A stopped embedded server leaves no Unix socket: asyncpg's connect raises a plain OSError.
    missing_socket_dir = Path(tempfile.mkdtemp(prefix="elephantasm-nosock-"))
    with pytest.raises(OSError) as caught:
        await asyncpg.connect(host=str(missing_socket_dir), user="x", database="x", timeout=5)
    assert is_unavailable(caught.value)


def test_oserror_outside_the_driver_is_not_unavailable(tmp_path: Path) -> None:
    with pytest.raises(OSError) as caught:
        (tmp_path / "no-such-snapshot.kv").read_bytes()
    assert not is_unavailable(caught.value)
