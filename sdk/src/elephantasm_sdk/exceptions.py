"""Exception hierarchy. Names and constructors match the published ``elephantasm`` 0.2.0 SDK.

Every HTTP error carries ``status_code`` and the server's ``detail`` exactly as sent (a string, or for
422 the list of field errors); ``message`` is a readable string form of it.
"""

from __future__ import annotations

from typing import Any


class ElephantasmError(Exception):
    """Base exception for all Elephantasm errors."""

    default_message = "Elephantasm request failed"
    default_status: int | None = None

    def __init__(
        self,
        message: str | None = None,
        status_code: int | None = None,
        *,
        detail: Any = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        message = message if message is not None else self.default_message
        super().__init__(message)
        self.message = message
        self.status_code = status_code if status_code is not None else self.default_status
        self.detail = detail if detail is not None else message
        self.headers = {k.lower(): v for k, v in (headers or {}).items()}


class AuthenticationError(ElephantasmError):
    """Raised when authentication fails (401)."""

    default_message = "Authentication failed"
    default_status = 401


class PermissionDeniedError(ElephantasmError):
    """Raised when the API key's scope does not allow the request, e.g. a write with a read key (403)."""

    default_message = "Permission denied"
    default_status = 403


class NotFoundError(ElephantasmError):
    """Raised when a resource is not found, or belongs to another organisation (404)."""

    default_message = "Resource not found"
    default_status = 404


class ConflictError(ElephantasmError):
    """Raised when the request conflicts with current state, e.g. a dream already running (409)."""

    default_message = "Conflict"
    default_status = 409


class PayloadTooLargeError(ElephantasmError):
    """Raised when an event or request body exceeds the server's size limit (413)."""

    default_message = "Payload too large"
    default_status = 413


class ValidationError(ElephantasmError):
    """Raised when request validation fails (422); ``detail`` holds the field errors."""

    default_message = "Validation failed"
    default_status = 422


class RateLimitError(ElephantasmError):
    """Raised when the rate limit is exceeded (429) and retries are exhausted."""

    default_message = "Rate limit exceeded"
    default_status = 429

    @property
    def retry_after(self) -> float | None:
        """Seconds the server asked us to wait (``Retry-After``), if it said."""
        from ._core.retry import parse_retry_after

        return parse_retry_after(self.headers.get("retry-after"))


class ServerError(ElephantasmError):
    """Raised when the server answers with a 5xx status and retries are exhausted."""

    default_message = "Server error"
    default_status = 500


class APIConnectionError(ElephantasmError):
    """Raised when the server could not be reached (after retries)."""

    default_message = "Could not connect to the Elephantasm API"


class APITimeoutError(APIConnectionError):
    """Raised when a request timed out (after retries)."""

    default_message = "Request to the Elephantasm API timed out"


class DreamTimeoutError(ElephantasmError, TimeoutError):
    """Raised by ``dreams.wait()`` when a run has not finished within the timeout."""

    default_message = "Dream run did not finish in time"
