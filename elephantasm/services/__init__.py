"""Use cases shared by the API, the dreamer and the CLI."""
