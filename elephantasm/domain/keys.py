"""API-key scopes and what a key may mint. Pure: no I/O, the clock is an argument."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from elephantasm.domain.errors import ForbiddenError, ValidationError


class KeyScope(StrEnum):
    """What a key may do; each scope includes the ones below it."""

    READ = "read"
    """Every read: lists, gets, searches, packs (serving a pack records recalls: still a read)."""
    WRITE = "write"
    """Reads plus every write to animas, events, memories, knowledge, identities and dreams."""
    ADMIN = "admin"
    """Writes plus managing the org's API keys."""

    def allows(self, needed: KeyScope) -> bool:
        """Whether a key of this scope may do what ``needed`` requires (read < write < admin)."""
        order = list(KeyScope)  # declaration order is the order of power
        return order.index(self) >= order.index(needed)


def minted_limits(
    minter_scope: KeyScope,
    minter_expires: datetime | None,
    scope: KeyScope | None,
    expires_at: datetime | None,
    now: datetime,
) -> tuple[KeyScope, datetime | None]:
    """The scope and expiry of a key minted by another: never more powerful, never longer-lived.

    Omitted values default to the minter's (so a key with an expiry mints keys with the same one);
    asking for more than the minter has is a ForbiddenError, an expiry in the past a ValidationError.
    """
    scope = scope or minter_scope
    if not minter_scope.allows(scope):
        raise ForbiddenError(f"scope: a {minter_scope} key cannot mint a {scope} key")
    if expires_at is not None and expires_at <= now:
        raise ValidationError("expires_at: must be in the future")
    if minter_expires is not None:
        if expires_at is None:
            expires_at = minter_expires
        elif expires_at > minter_expires:
            raise ForbiddenError(
                f"expires_at: a key expiring at {minter_expires.isoformat()} cannot mint one that expires later"
            )
    return scope, expires_at
