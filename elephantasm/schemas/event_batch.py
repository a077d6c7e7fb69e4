"""A batch body decoded in one pass by msgspec, for the common case of a valid batch.

Validating a large batch through pydantic costs a Python call per field per event, so
:func:`decode_batch` decodes the raw bytes straight into structs: types, required fields, unknown
fields and length/range constraints are checked in C, and the few rules msgspec cannot express
cost one Python check per event. It accepts only bodies that :class:`~elephantasm.schemas.events.EventBatchCreate`
accepts, with the same values; anything else returns ``None`` and the caller validates with the
pydantic model, whose errors (and their wording) are the contract. A struct has the attributes of
an :class:`~elephantasm.schemas.events.EventCreate` that the write path reads.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

import msgspec
from pydantic import TypeAdapter
from pydantic import ValidationError as PydanticValidationError

from elephantasm.domain.enums import EventType
from elephantasm.schemas.common import Instant

_EVENT_TYPES = frozenset(t.value for t in EventType)
# The same annotation as EventCreate.occurred_at: the same parser, values and refusals.
_INSTANT: TypeAdapter[Any] = TypeAdapter(Instant | None)
# JSON can spell NUL only as this escape (a raw NUL byte is malformed JSON); seeing it anywhere in
# the body (even inside an escaped backslash) sends the body to the model, which names the field.
_NUL_ESCAPE = b"\\u0000"


class EventIn(msgspec.Struct, forbid_unknown_fields=True):
    """One event of a batch, as :class:`~elephantasm.schemas.events.EventCreate` (same constraints)."""

    anima_id: uuid.UUID
    event_type: str
    content: Annotated[str, msgspec.Meta(min_length=1)]
    role: Annotated[str, msgspec.Meta(max_length=64)] | None = None
    author: Annotated[str, msgspec.Meta(max_length=200)] | None = None
    summary: str | None = None
    occurred_at: Any = None  # parsed by the model's own instant adapter (below)
    session_id: Annotated[str, msgspec.Meta(max_length=200)] | None = None
    meta: dict[str, Any] = {}
    source_uri: Annotated[str, msgspec.Meta(max_length=4096)] | None = None
    dedupe_key: Annotated[str, msgspec.Meta(min_length=1, max_length=200)] | None = None
    importance_score: Annotated[float, msgspec.Meta(ge=0.0, le=1.0)] | None = None


class BatchIn(msgspec.Struct, forbid_unknown_fields=True):
    """A batch body, as :class:`~elephantasm.schemas.events.EventBatchCreate`."""

    events: Annotated[list[EventIn], msgspec.Meta(min_length=1)]


_decoder = msgspec.json.Decoder(BatchIn)


def _acceptable(event: EventIn) -> bool:
    """The model's rules beyond msgspec's constraints; parses ``occurred_at`` in place."""
    if event.event_type not in _EVENT_TYPES or not event.content.strip():
        return False
    if event.occurred_at is not None:
        try:
            event.occurred_at = _INSTANT.validate_python(event.occurred_at)
        except PydanticValidationError:
            return False
    return True


def decode_batch(raw: bytes) -> BatchIn | None:
    """The batch in ``raw`` when it is certainly valid, else ``None`` (validate it with the model)."""
    if _NUL_ESCAPE in raw:
        return None
    try:
        batch = _decoder.decode(raw)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):  # ValidationError is a DecodeError
        return None
    if all(_acceptable(e) for e in batch.events):
        return batch
    return None
