"""The inspector's signed session cookie and CSRF tokens (pure: secret and time are arguments).

The cookie holds ``<key id>.<expiry>.<nonce>.<signature>``: the id of the API key used to sign in
(never the key itself), when the session ends, and a random nonce the CSRF token derives from.
The signature is HMAC-SHA256 under the server secret (the one every replica shares), so any
replica can check a session with no session store; the key's org comes from the database on
every request (``services/keys.active_key``). Each use of the secret has its own label, so a
value signed for one purpose never verifies for another.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import uuid
from dataclasses import dataclass

SESSION_COOKIE = "elephantasm_ui"
LOGIN_COOKIE = "elephantasm_ui_login"
COOKIE_PATH = "/ui"


def _sign(secret: bytes, purpose: str, value: str) -> str:
    digest = hmac.new(secret, f"elephantasm-ui:{purpose}:{value}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


@dataclass(frozen=True, slots=True)
class UiSession:
    """A verified session: which key signed in, until when (epoch seconds), and its nonce."""

    key_id: uuid.UUID
    expires: int
    nonce: str


def issue_session(secret: bytes, key_id: uuid.UUID, now: float, lifetime_seconds: float) -> str:
    """A new cookie value for ``key_id`` valid for ``lifetime_seconds`` from ``now``."""
    payload = f"{key_id.hex}.{int(now + lifetime_seconds)}.{secrets.token_urlsafe(16)}"
    return f"{payload}.{_sign(secret, 'session', payload)}"


def read_session(secret: bytes, value: str | None, now: float) -> UiSession | None:
    """The session a cookie value carries, or None if it is missing, forged, malformed or expired."""
    if not value or len(value) > 300:
        return None
    payload, _, signature = value.rpartition(".")
    if not payload or not _same(signature, _sign(secret, "session", payload)):
        return None
    try:
        key_hex, expires_text, nonce = payload.split(".")
        key_id, expires = uuid.UUID(hex=key_hex), int(expires_text)
    except ValueError:
        return None
    return UiSession(key_id, expires, nonce) if expires > now else None


def csrf_token(secret: bytes, nonce: str) -> str:
    """The token every POST form of a session carries (bound to the session's nonce)."""
    return _sign(secret, "csrf", nonce)


def csrf_ok(secret: bytes, nonce: str, token: str | None) -> bool:
    """Whether ``token`` is the session's CSRF token."""
    return bool(token) and _same(token or "", csrf_token(secret, nonce))


def new_login_nonce() -> str:
    """A random value for the pre-sign-in cookie (the sign-in form's CSRF defence)."""
    return secrets.token_urlsafe(16)


def login_token(secret: bytes, nonce: str) -> str:
    """The sign-in form's hidden token for a pre-sign-in cookie holding ``nonce``."""
    return _sign(secret, "login", nonce)


def login_ok(secret: bytes, nonce: str | None, token: str | None) -> bool:
    """Whether a sign-in POST carries the token of the pre-sign-in cookie it came with."""
    return bool(nonce) and bool(token) and _same(token or "", login_token(secret, nonce or ""))
