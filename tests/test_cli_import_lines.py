"""``elephantasm events import`` reads its file as the anima import reads one: every bad line is a
clear error naming the line, never a traceback."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from elephantasm.cli.importer import parse_lines
from elephantasm.domain.errors import ValidationError

ANIMA = str(uuid.uuid4())


def _file(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("[1, 2]", "line 3: not a JSON object"),
        ('"text"', "line 3: not a JSON object"),
        ("{not json", "line 3: malformed JSON"),
        ('{"event_type": "message.sideways", "content": "x"}', "line 3: event_type: unknown 'message.sideways'"),
        ('{"event_type": "system", "content": "x", "extra": 1}', "line 3: extra: Extra inputs are not permitted"),
    ],
)
def test_a_bad_line_is_named_by_its_line_number_with_its_problem(tmp_path: Path, line: str, problem: str) -> None:
    good = '{"event_type": "system", "content": "fine"}'
    with pytest.raises(ValidationError) as caught:
        parse_lines(_file(tmp_path, good, "", line), ANIMA)
    assert caught.value.detail.startswith(problem), caught.value.detail
    assert "pydantic" not in caught.value.detail  # no banner, no link: only what is wrong


def test_good_lines_take_the_default_anima(tmp_path: Path) -> None:
    other = str(uuid.uuid4())
    events = parse_lines(
        _file(
            tmp_path,
            '{"event_type": "system", "content": "a"}',
            f'{{"anima_id": "{other}", "content": "b", "event_type": "message.in"}}',
        ),
        ANIMA,
    )
    assert [str(e.anima_id) for e in events] == [ANIMA, other]
