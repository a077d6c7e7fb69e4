"""Errors of the local-model layer, with the HTTP status they map to."""

from __future__ import annotations

from elephantasm.domain.errors import DomainError, ValidationError


class LocalModelUnavailable(DomainError):
    """The ``local`` extra or the GGUF model is not installed, or local models are disabled."""

    status_hint = 503


class KVStateError(ValidationError):
    """llama.cpp refused a KV state (another KV type, a smaller context, another model)."""


class TemplateSplitError(ValidationError):
    """The chat template does not render the system turn as a prefix of the conversation."""
