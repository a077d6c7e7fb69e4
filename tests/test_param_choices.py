"""A filter's value is checked by one rule on the API and the inspector: unknown values are a 422
naming the parameter and listing the valid values; an empty inspector filter means "any"."""

from __future__ import annotations

import pytest

from api.deps import parse_enum
from api.ui.deps import choice
from elephantasm.db.models import MEMORY_STATES
from elephantasm.domain.enums import MemoryState
from elephantasm.domain.errors import ValidationError


def test_api_enum_parameter() -> None:
    assert parse_enum(MemoryState, "state", None) is None
    assert parse_enum(MemoryState, "state", "archived") is MemoryState("archived")
    with pytest.raises(ValidationError) as err:
        parse_enum(MemoryState, "state", "bogus")
    valid = ", ".join(m.value for m in MemoryState)
    assert err.value.detail == f"state: unknown 'bogus'; valid values: {valid}"


def test_inspector_filter() -> None:
    assert choice("state", None, MEMORY_STATES) is None
    assert choice("state", "", MEMORY_STATES) is None
    assert choice("state", "archived", MEMORY_STATES) == "archived"
    with pytest.raises(ValidationError) as err:
        choice("state", "bogus", MEMORY_STATES)
    assert err.value.detail == f"state: unknown 'bogus'; valid values: {', '.join(MEMORY_STATES)}"
