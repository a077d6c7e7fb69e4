"""Domain errors. Raised by the core, mapped to HTTP statuses in exactly one place (``api/errors.py``)."""

from __future__ import annotations

import errno
from typing import Any


class DomainError(Exception):
    """Base class: carries a human-readable ``detail`` for the client."""

    status_hint = 400

    def __init__(self, detail: Any) -> None:
        super().__init__(detail if isinstance(detail, str) else repr(detail))
        self.detail = detail


class NotFoundError(DomainError):
    """The thing does not exist, or belongs to another org (never distinguish the two)."""

    status_hint = 404


class ValidationError(DomainError):
    """Input is well-formed JSON but semantically invalid."""

    status_hint = 422


class ConflictError(DomainError):
    """The request conflicts with current state (e.g. a dream already running)."""

    status_hint = 409


class PayloadTooLargeError(DomainError):
    """An item exceeds its configured size limit."""

    status_hint = 413


class StorageFullError(DomainError):
    """The server's storage cannot take the bytes (no space, a quota, a file-size limit)."""

    status_hint = 507


STORAGE_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
"""The OSError numbers of storage that cannot take more bytes (StorageFullError, 507)."""


class ForbiddenError(DomainError):
    """The caller's key is valid but may not do this (its scope, or a limit on what it may mint)."""

    status_hint = 403


class AuthenticationError(DomainError):
    """Missing, unknown, revoked or expired API key."""

    status_hint = 401


class RateLimitedError(DomainError):
    """Too many attempts (failed authentications) from one client; retry after ``retry_after`` seconds."""

    status_hint = 429

    def __init__(self, detail: Any, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after = retry_after
