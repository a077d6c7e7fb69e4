"""HTTP transport (Litestar): validate the wire schema, call one service, map the result."""

from api.app import create_app

__all__ = ["create_app"]
