"""Wire schemas (``XCreate``/``XUpdate``/``XRead``), separate from table models."""
