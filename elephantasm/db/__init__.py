"""Persistence: table models, engine, embedded Postgres, repositories."""
