"""The body of ``POST /api/events/batch``: decoded by msgspec in one pass when valid, by the model otherwise.

A Litestar DTO is the hook that hands the raw body to our decoder while the OpenAPI document still
describes it as ``EventBatchCreate``. A valid batch becomes a :class:`~elephantasm.schemas.event_batch.BatchIn`;
any other body takes Litestar's own path for a pydantic body (same decoding, validation and field
errors), so a bad batch is answered as any bad body is.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from litestar.dto import AbstractDTO, DTOFieldDefinition
from litestar.openapi.spec import Reference, Schema
from litestar.serialization import decode_json
from litestar.typing import FieldDefinition
from pydantic import ValidationError as PydanticValidationError

from api.guards import json_decode_errors
from elephantasm.schemas.event_batch import BatchIn, decode_batch
from elephantasm.schemas.events import EventBatchCreate


class EventBatchBody(AbstractDTO[EventBatchCreate]):
    """Decodes a batch body to a ``BatchIn`` (valid, fast path) or an ``EventBatchCreate`` (the model's path)."""

    @classmethod
    def generate_field_definitions(cls, model_type: type[Any]) -> Generator[DTOFieldDefinition, None, None]:
        """Unused: this DTO builds no transfer model."""
        yield from ()

    @classmethod
    def detect_nested_field(cls, field_definition: FieldDefinition) -> bool:
        """Unused: this DTO builds no transfer model."""
        return False

    @classmethod
    def create_for_field_definition(
        cls, field_definition: FieldDefinition, handler_id: str, backend_cls: Any = None
    ) -> None:
        """Nothing to prepare: decoding needs no per-handler backend."""

    @classmethod
    def create_openapi_schema(
        cls, field_definition: FieldDefinition, handler_id: str, schema_creator: Any
    ) -> Reference | Schema:
        """The schema Litestar documents for an ``EventBatchCreate`` body."""
        body = FieldDefinition.from_annotation(EventBatchCreate, kwarg_definition=field_definition.kwarg_definition)
        result: Reference | Schema = schema_creator.for_field_definition(body)
        return result

    def decode_bytes(self, value: bytes) -> BatchIn | EventBatchCreate:
        """The batch; a malformed or invalid body raises what Litestar would raise for it."""
        return decode_batch(value) or self._validated(value)

    def _validated(self, value: bytes) -> EventBatchCreate:
        connection = self.asgi_connection
        with json_decode_errors():
            decoded = decode_json(value, type_decoders=connection.route_handler.resolve_type_decoders())
        try:
            return EventBatchCreate.model_validate(decoded, strict=False)
        except PydanticValidationError as exc:
            signature = connection.route_handler.signature_model
            messages = [
                signature._build_error_message([str(part) for part in err["loc"]], err["msg"], connection)
                for err in exc.errors(include_input=False)
            ]
            raise signature._create_exception(connection, messages) from exc
