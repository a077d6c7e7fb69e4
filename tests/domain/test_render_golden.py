"""Golden test: the rendered prompt for a fixed input must not change by accident.

To accept an intended change, run with ``ELEPHANTASM_UPDATE_GOLDEN=1`` once, review the diff of
``golden/pack_render.txt``, and bump ``PACK_FORMAT_VERSION`` so cached snapshots miss.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from elephantasm.domain.fingerprint import PACK_FORMAT_VERSION
from elephantasm.domain.lean import IdentityText, identity_lines, lean_text
from elephantasm.domain.packing import pack
from elephantasm.domain.presets import get_preset
from elephantasm.domain.render import Layer, PackItem
from elephantasm.domain.temporal import temporal_context
from elephantasm.tokens import TokenCounter
from tests.domain.rendering import render_pack

GOLDEN = Path(__file__).parent / "golden" / "pack_render.txt"
AS_OF = datetime(2025, 3, 10, 12, 0, tzinfo=UTC)
IDENTITY = IdentityText(
    "Ada",
    "research assistant for a small lab",
    "INTJ",
    "warm, concise,\n  and direct",
    prose="I tend to write short messages in a warm tone. Our conversations often touch on budgets.",
)


def fixed_candidates() -> dict[Layer, list[PackItem]]:
    """A small but complete pack: every layer, labels, times, ties and multi-line text."""
    when = temporal_context(datetime(2025, 3, 7, 9, 30, tzinfo=UTC), AS_OF)
    return {
        # Identity as a compile renders it: at most three short lines, never the stored internals.
        Layer.IDENTITY: [
            PackItem(f"identity:{key}", line, score=1.0 - 0.05 * i)
            for i, (key, line) in enumerate(identity_lines(IDENTITY, brief=False))
        ],
        Layer.KNOWLEDGE: [
            PackItem("k-2", "User is allergic to peanuts.", score=0.91, label="FACT"),
            PackItem("k-1", "Prefers metric units.", score=0.91, label="PRINCIPLE"),
            PackItem("k-3", "Deploys with `make ship` after tests pass.", score=0.55, label="METHOD"),
        ],
        Layer.LONG_TERM: [
            PackItem("m-1", "Planned a hiking trip to the Alps.", score=0.72, time=datetime(2025, 2, 1, 8, tzinfo=UTC)),
            PackItem(
                "m-2",
                "Switched the team from Jenkins to GitHub Actions.",
                score=0.72,
                time=datetime(2025, 2, 20, tzinfo=UTC),
            ),
            PackItem(
                "m-3",
                lean_text(
                    "User: Mentioned a cat named Turing. Assistant: Interesting, tell me more if you "
                    "like. User: It sleeps on the keyboard."
                ),
                score=0.4,
                time=None,
            ),
        ],
        Layer.SESSION: [
            PackItem(
                "s-1",
                "user: can you remind me what we decided about the budget?",
                score=0.8,
                time=datetime(2025, 3, 10, 11, 42, tzinfo=UTC),
            ),
            PackItem(
                "s-2",
                lean_text("assistant: Got it, I'll remember that. We capped it at 5k EUR."),
                score=0.8,
                time=datetime(2025, 3, 10, 11, 43, tzinfo=UTC),
            ),
        ],
        Layer.TEMPORAL: [PackItem("temporal", when.formatted)],
    }


def test_render_matches_golden() -> None:
    cfg = get_preset("conversational")
    res = pack(
        fixed_candidates(),
        max_tokens=4000,
        count=TokenCounter("o200k_base"),
        shares=cfg.shares.as_mapping(),
        limits=cfg.limits.as_mapping(),
    )
    assert res.text == render_pack(fixed_candidates())  # everything fits at 4000 tokens
    if os.environ.get("ELEPHANTASM_UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(res.text, encoding="utf-8")
    expected = GOLDEN.read_text(encoding="utf-8")
    assert res.text == expected, f"rendering changed; see module doc (format v{PACK_FORMAT_VERSION})"
    assert res.token_count == TokenCounter("o200k_base")(expected)


def test_tight_budget_keeps_best_items_and_stable_layers_first() -> None:
    res = pack(fixed_candidates(), max_tokens=60, count=TokenCounter("o200k_base"))
    assert res.token_count <= 60
    text = res.text
    positions = [text.find(h) for h in ("## Identity", "## Knowledge", "## Long-term memories") if h in text]
    assert positions == sorted(positions)
    if "## Current session" in text and "## Temporal context" in text:
        assert text.find("## Current session") < text.find("## Temporal context")
