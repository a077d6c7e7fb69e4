"""Line-by-line tokenization of a prompt prefix: every path tokenizes it the same way, so token ids
always agree, and each rendered pack line is a known token range."""

from __future__ import annotations

from collections.abc import Callable, Sequence


def split_lines(text: str) -> list[str]:
    """``text`` cut after every newline (joining the pieces gives ``text`` back)."""
    return text.splitlines(keepends=True)


def line_offsets(lines: Sequence[str], tokenize: Callable[[str, int], list[int]]) -> tuple[list[int], list[int]]:
    """All token ids and each line's start offset; ``tokenize(line, index)`` tokenizes one line."""
    tokens: list[int] = []
    starts: list[int] = []
    for i, line in enumerate(lines):
        starts.append(len(tokens))
        tokens.extend(tokenize(line, i))
    starts.append(len(tokens))
    return tokens, starts
