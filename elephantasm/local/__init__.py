"""Local GGUF models through llama-cpp-python (the optional ``local`` extra): the engine adapter,
the snapshot store and model lookup. Importing this package never imports ``llama_cpp``."""

from elephantasm.local.errors import KVStateError, LocalModelUnavailable, TemplateSplitError
from elephantasm.local.holder import LocalModels
from elephantasm.local.model import default_model_path, llama_cpp_available, resolve_model_path
from elephantasm.local.sampling import Sampling
from elephantasm.local.store import SnapshotStore

__all__ = [
    "KVStateError",
    "LocalModelUnavailable",
    "LocalModels",
    "Sampling",
    "SnapshotStore",
    "TemplateSplitError",
    "default_model_path",
    "llama_cpp_available",
    "resolve_model_path",
]
