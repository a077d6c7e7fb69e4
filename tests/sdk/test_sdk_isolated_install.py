"""The SDK installs alone, offline, into a clean virtualenv, and is a drop-in for elephantasm 0.2.0.

Needs a wheelhouse (no downloads happen here): ``$ELEPHANTASM_WHEELHOUSE`` or ``<repo>/.wheelhouse``,
prepared with::

    pip download -d .wheelhouse httpx pydantic elephantasm==0.2.0 setuptools wheel
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _sdk_support import pack_json

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
DOWNLOAD_HINT = "pip download -d .wheelhouse httpx pydantic elephantasm==0.2.0 setuptools wheel"
SERVER_MODULES = ["litestar", "sqlalchemy", "sqlmodel", "asyncpg", "alembic", "elephantasm.db", "msgspec"]


def _wheelhouse() -> Path:
    path = Path(os.environ.get("ELEPHANTASM_WHEELHOUSE") or REPO / ".wheelhouse")
    if path.is_dir() and any(path.glob("httpx-*.whl")) and any(path.glob("pydantic-*.whl")):
        return path
    message = f"SDK wheelhouse missing or incomplete at {path}; create it with: {DOWNLOAD_HINT}"
    if os.environ.get("CI", "").lower() not in ("", "0", "false", "no"):
        pytest.fail(message)
    pytest.skip(message)


def _clean_env() -> dict[str, str]:
    """An environment that cannot reach an index or borrow the main venv's packages."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_CACHE_DIR="1")
    return env


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(args, cwd=cwd, env=env or _clean_env(), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{' '.join(map(str, args))} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@pytest.fixture(scope="module")
def sdk_venv(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(python of a fresh venv with only the SDK installed, wheelhouse, work dir)."""
    wheelhouse = _wheelhouse()
    work = tmp_path_factory.mktemp("sdk_isolated")
    src = work / "sdk"
    shutil.copytree(REPO / "sdk", src, ignore=shutil.ignore_patterns("*.egg-info", "build", "dist", "__pycache__"))
    _run([sys.executable, "-m", "venv", str(work / "venv")], cwd=work)
    python = work / "venv" / "bin" / "python"
    _run([str(python), "-m", "pip", "install", "--no-index", "--find-links", str(wheelhouse), str(src)], cwd=work)
    return python, wheelhouse, work


CHECK_ALONE = """
import importlib.metadata as md, importlib.util, json, sys
import elephantasm_sdk
from elephantasm_sdk import AsyncElephantasm, Elephantasm, extract, inject, MemoryPack
def importable(name):
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False
print(json.dumps({
    "file": elephantasm_sdk.__file__,
    "requires": sorted(r.split(">")[0].split("<")[0].split("=")[0].strip() for r in md.requires("elephantasm-sdk")),
    "importable": [m for m in sys.argv[1:] if importable(m)],
}))
"""


def test_sdk_installs_and_imports_without_server_deps(sdk_venv: tuple[Path, Path, Path]) -> None:
    python, _, work = sdk_venv
    out = json.loads(_run([str(python), "-c", CHECK_ALONE, *SERVER_MODULES], cwd=work))
    assert out["file"].startswith(str(work / "venv")), out["file"]
    assert out["requires"] == ["httpx", "pydantic"]
    assert out["importable"] == [], f"server packages leaked into the SDK install: {out['importable']}"


def test_sdk_is_a_drop_in_for_elephantasm_020(sdk_venv: tuple[Path, Path, Path]) -> None:
    python, wheelhouse, work = sdk_venv
    old = work / "old_sdk"
    if not any(wheelhouse.glob("elephantasm-0.2.0-*.whl")):
        pytest.skip(f"elephantasm 0.2.0 wheel not in {wheelhouse}; {DOWNLOAD_HINT}")
    if not old.exists():
        _run([str(python), "-m", "pip", "install", "--no-index", "--find-links", str(wheelhouse),
              "--target", str(old), "elephantasm==0.2.0"], cwd=work)  # fmt: skip
    pack_file = work / "pack.json"
    pack_file.write_text(json.dumps(pack_json("00000000-0000-4000-8000-0000000000c3",
                                              "00000000-0000-4000-8000-0000000000a1", "CTX")))  # fmt: skip
    env = {**_clean_env(), "PYTHONPATH": str(old)}
    out = _run([str(python), str(HERE / "compat_check_020.py"), str(pack_file)], cwd=work, env=env)
    problems = json.loads(out.strip().splitlines()[-1])
    assert problems == [], "\n".join(problems)
