"""MCP server: Elephantasm's memory as tools for agent hosts (stdio bridge and the ``/mcp`` mount)."""
