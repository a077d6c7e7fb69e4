"""The dreamer: a thin APScheduler shell over ``elephantasm.services.dreams``."""

from dreamer.scheduler import Dreamer, scheduler_lifespan
from dreamer.worker import run_worker

__all__ = ["Dreamer", "run_worker", "scheduler_lifespan"]
