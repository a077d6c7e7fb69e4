"""The process's local engine, loaded on first use (loading needs the ``local`` extra and the model),
and its snapshot store."""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING

from elephantasm.local.errors import LocalModelUnavailable
from elephantasm.local.model import resolve_model_path
from elephantasm.local.store import SnapshotStore

if TYPE_CHECKING:
    from elephantasm.local.engine import LocalEngine
    from elephantasm.settings import Settings


class LocalModels:
    """Holds at most one loaded :class:`LocalEngine` per process (a model is ~100 MB–GBs of RAM), the
    snapshot store (``local_kv_dir``, else ``data_dir/kv``) and its byte budget."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._engine: LocalEngine | None = None
        self._loading = threading.Lock()
        self.store = SnapshotStore(settings.local_kv_dir or settings.data_dir / "kv")
        self.budget_bytes = settings.local_kv_budget_bytes
        self.reuse = settings.local_kv_snapshots
        """Whether prompts reuse KV states at all (``local_kv_snapshots``)."""

    def engine(self) -> LocalEngine:
        """The engine, loading it now if needed; 503 when local models are off or not installed."""
        settings = self._settings
        if not settings.local_enabled:
            raise LocalModelUnavailable("local models are disabled (ELEPHANTASM_LOCAL_ENABLED=false)")
        with self._loading:
            if self._engine is None:
                from elephantasm.local.engine import LocalEngine

                path = resolve_model_path(settings.local_model_path)
                self._engine = LocalEngine(
                    path,
                    n_ctx=settings.local_n_ctx,
                    n_threads=settings.local_n_threads,
                    kv_type=settings.local_kv_type,
                    memory_bytes=settings.local_kv_memory_bytes,
                )
            return self._engine

    async def aengine(self) -> LocalEngine:
        """:meth:`engine` off the event loop (the first call loads the model)."""
        return await asyncio.to_thread(self.engine)

    def forget_org(self, org_id: object) -> None:
        """Drop the KV states the process holds for ``org_id`` (its kept conversations, and the
        live cache if it is the org's): after a deletion they may hold text that is gone."""
        engine = self._engine
        if engine is None:
            return
        engine.states.drop_owner(org_id)
        if engine.owner == org_id:
            engine.owner = None  # never reused again; the next prompt replaces it
