"""Benchmarks: ``python -m benchmarks <name>|all [--size tiny|small|full] [--out benchmarks/RESULTS.md]``.

Each benchmark is a module listed in :mod:`benchmarks.registry`; results land in a named section of
``RESULTS.md`` (see :mod:`benchmarks.results`).
"""
