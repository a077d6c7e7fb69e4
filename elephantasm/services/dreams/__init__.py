"""The dreamer's use cases: runs (claim → distil → write → sleep), and reads of what they produce."""

from elephantasm.services.dreams.runner import execute_run, run_dream, start_dream_in_background
from elephantasm.services.dreams.runs import start_run
from elephantasm.services.dreams.tasks import DreamTasks

__all__ = ["DreamTasks", "execute_run", "run_dream", "start_dream_in_background", "start_run"]
