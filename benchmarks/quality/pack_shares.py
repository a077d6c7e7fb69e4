"""Where a pack's tokens go: identity, knowledge, memories, and how much of it is filler.

Filler is a memory line that is only small talk (``elephantasm.domain.small_talk``, speaker labels
and date prefixes aside) or a knowledge line that fails the well-formedness test
(``elephantasm.domain.dreaming.wellformed``): tokens a model pays for that carry no fact.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from elephantasm.domain.dreaming.wellformed import malformation
from elephantasm.domain.render import Layer, layer_lines
from elephantasm.domain.small_talk import is_small_talk

_LINE_PREFIX = re.compile(r"^(?:\[[A-Z]+\] )?(?:\([0-9: -]+\) )?")
_LABEL = re.compile(r"(?:^|(?<=[.!?…] ))[A-Z][\w'-]*(?: [a-z]+)?: ")


def is_filler_line(layer: Layer, line: str) -> bool:
    """Whether one rendered item line (without its ``- ``) carries no fact."""
    body = _LINE_PREFIX.sub("", line, count=1)
    if layer is Layer.KNOWLEDGE:
        return line.startswith(("[FACT]", "[EXPERIENCE]")) and malformation(body) is not None
    return is_small_talk(_LABEL.sub(" ", body))


def token_shares(pack: dict[str, Any], count: Callable[[str], int]) -> dict[str, int]:
    """Tokens of the pack by what they carry: ``identity``, ``knowledge``, ``memories`` (long-term and
    session), ``filler`` (a part of the previous two) and ``total``."""
    layers = pack.get("layer_tokens") or {}
    context = pack.get("context") or ""
    filler = sum(
        count(f"- {line}\n")
        for layer in (Layer.KNOWLEDGE, Layer.LONG_TERM, Layer.SESSION)
        for line in layer_lines(context, layer)
        if is_filler_line(layer, line)
    )
    return {
        "identity": int(layers.get("identity", 0)),
        "knowledge": int(layers.get("knowledge", 0)),
        "memories": int(layers.get("long_term", 0)) + int(layers.get("session", 0)),
        "filler": filler,
        "total": int(pack.get("token_count") or 0),
    }
