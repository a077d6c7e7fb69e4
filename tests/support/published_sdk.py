"""The published ``elephantasm==0.2.0`` client, installed in a throwaway virtualenv.

It shares our package's import name (``elephantasm``), so it cannot live in the project's venv.
It is installed offline from a wheelhouse (``ELEPHANTASM_WHEELHOUSE``, default ``<repo>/.wheelhouse``,
filled by ``pip download -d .wheelhouse elephantasm==0.2.0 …``); nothing is downloaded at test time.
Without the wheelhouse the tests are skipped locally and fail under CI.

Reuse from any test module::

    @pytest.fixture(scope="session")
    def sdk_python(tmp_path_factory):
        return published_sdk_python(tmp_path_factory)

    result = run_sdk_script(sdk_python, SCRIPT, api_key=..., endpoint=live_server)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.support.servers import REPO_ROOT

SDK_REQUIREMENT = "elephantasm==0.2.0"
SDK_WHEEL_GLOB = "elephantasm-0.2.0-*.whl"

_venvs: dict[str, Path] = {}  # one venv per test session, shared by every module that asks


def wheelhouse() -> Path:
    """Where the SDK wheel and its dependencies are expected."""
    return Path(os.environ.get("ELEPHANTASM_WHEELHOUSE") or REPO_ROOT / ".wheelhouse")


def _missing(reason: str) -> None:
    message = (
        f"published SDK unavailable: {reason}. Fill the wheelhouse first: "
        f"pip download -d {wheelhouse()} {SDK_REQUIREMENT}"
    )
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def published_sdk_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Path to the python of a venv holding the published SDK (created once per session)."""
    if "python" in _venvs:
        return _venvs["python"]
    house = wheelhouse()
    if not house.is_dir() or not any(house.glob(SDK_WHEEL_GLOB)):
        _missing(f"no {SDK_WHEEL_GLOB} in {house}")
    venv = tmp_path_factory.mktemp("published-sdk") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            "--no-index",
            "--find-links",
            str(house),
            SDK_REQUIREMENT,
        ],
        capture_output=True,
        text=True,
    )
    if install.returncode != 0:
        _missing(f"offline install from {house} failed:\n{install.stdout}\n{install.stderr}")
    _venvs["python"] = python
    return python


def sdk_env(api_key: str, endpoint: str, **extra: str) -> dict[str, str]:
    """A clean environment for the SDK: only its own settings, none of the server's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ELEPHANTASM_")}
    env.update(ELEPHANTASM_API_KEY=api_key, ELEPHANTASM_ENDPOINT=endpoint, PYTHONUNBUFFERED="1")
    env.pop("PYTHONPATH", None)  # never let our own ``elephantasm`` shadow the published one
    env.update(extra)
    return env


def run_sdk_script(python: Path, script: str, api_key: str, endpoint: str, timeout: float = 120, **env: str) -> Any:
    """Run ``script`` with the SDK's python; it must print one JSON document last, which is returned.

    The script runs from a neutral directory so the repository's ``elephantasm`` package is not
    importable; a non-zero exit fails the test with the script's output.
    """
    proc = subprocess.run(
        [str(python), "-c", textwrap.dedent(script)],
        env=sdk_env(api_key, endpoint, **env),
        cwd=python.parent,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if proc.returncode != 0:
        pytest.fail(f"SDK script failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    return json.loads(lines[-1])
