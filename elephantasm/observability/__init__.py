"""Observability: Prometheus collectors and logging setup."""
