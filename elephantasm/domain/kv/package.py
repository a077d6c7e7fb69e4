"""Memory packages: one portable file holding a KV snapshot, its manifest and quality certificate.

Layout: ``MAGIC | u32 big-endian length | envelope JSON | KV snapshot bytes``. The envelope holds
the manifest, the certificate, the sha256 of every part and an HMAC-SHA256 signature (keyed by
the server secret) over the canonical JSON of everything else, so any edit is detected.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

from elephantasm.domain.fingerprint import canonical_json, sha256_hex
from elephantasm.domain.kv.framing import frame, unframe

MAGIC = b"EKVPKG1\n"
PACKAGE_FORMAT = 1
_SIGNING_CONTEXT = b"elephantasm kv-package v1"


class PackageError(ValueError):
    """A package that is malformed, altered, or signed with another secret."""


def _signing_key(secret: bytes) -> bytes:
    # A key of its own, derived from the server secret, so package signatures and API-key hashes
    # can never be confused with each other.
    return hmac.new(secret, _SIGNING_CONTEXT, hashlib.sha256).digest()


def _signature(body: dict[str, Any], secret: bytes) -> str:
    return hmac.new(_signing_key(secret), canonical_json(body).encode(), hashlib.sha256).hexdigest()


def seal_package(manifest: dict[str, Any], certificate: dict[str, Any], snapshot: bytes, secret: bytes) -> bytes:
    """The package file's bytes."""
    body = {
        "format": PACKAGE_FORMAT,
        "manifest": manifest,
        "certificate": certificate,
        "parts": {
            "manifest": sha256_hex(canonical_json(manifest)),
            "certificate": sha256_hex(canonical_json(certificate)),
            "kv": sha256_hex(snapshot),
        },
        "kv_bytes": len(snapshot),
    }
    return frame(MAGIC, {**body, "signature": _signature(body, secret)}, snapshot)


def _envelope(blob: bytes) -> tuple[dict[str, Any], bytes]:
    envelope, snapshot = unframe(blob, MAGIC, PackageError, "an Elephantasm memory package")
    if envelope.get("format") != PACKAGE_FORMAT:
        raise PackageError("unsupported package format")
    return envelope, snapshot


def open_package(blob: bytes, secret: bytes) -> tuple[dict[str, Any], dict[str, Any], bytes]:
    """(manifest, certificate, snapshot bytes) after checking every part and the signature."""
    envelope, snapshot = _envelope(blob)
    signature = envelope.pop("signature", None)
    if not isinstance(signature, str) or not hmac.compare_digest(signature, _signature(envelope, secret)):
        raise PackageError("package signature does not match (altered, or signed by another server secret)")
    parts = envelope.get("parts") or {}
    manifest, cert = envelope.get("manifest"), envelope.get("certificate")
    if envelope.get("kv_bytes") != len(snapshot) or parts.get("kv") != sha256_hex(snapshot):
        raise PackageError("package KV part checksum mismatch")
    if parts.get("manifest") != sha256_hex(canonical_json(manifest)):
        raise PackageError("package manifest checksum mismatch")
    if parts.get("certificate") != sha256_hex(canonical_json(cert)):
        raise PackageError("package certificate checksum mismatch")
    if not isinstance(manifest, dict) or not isinstance(cert, dict):
        raise PackageError("package manifest or certificate is missing")
    return manifest, cert, snapshot
