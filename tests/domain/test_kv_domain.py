"""Pure pieces of model-level memory: snapshot format, package signatures, certificate
arithmetic, item token ranges (no model needed)."""

from __future__ import annotations

import pytest

from benchmarks.kv_pruning import choose_prune, item_spans
from elephantasm.domain.kv.package import PackageError, open_package, seal_package
from elephantasm.domain.kv.quality import ProbeResult, certificate
from elephantasm.domain.kv.ranges import line_offsets, split_lines
from elephantasm.domain.kv.snapshot import SnapshotFormatError, decode_snapshot, encode_snapshot, snapshot_key

SECRET = b"server-secret"


def test_snapshot_round_trip_and_damage_detected() -> None:
    blob = encode_snapshot({"snapshot_key": "k", "tokens": [1, 2, 3]}, b"\x00\x01state")
    meta, state = decode_snapshot(blob)
    assert state == b"\x00\x01state" and meta["tokens"] == [1, 2, 3]
    with pytest.raises(SnapshotFormatError, match="checksum"):
        decode_snapshot(blob[:-1] + b"X")
    with pytest.raises(SnapshotFormatError, match="truncated"):
        decode_snapshot(blob[:-2])
    with pytest.raises(SnapshotFormatError, match="bad magic"):
        decode_snapshot(b"nonsense")


def test_snapshot_key_changes_with_every_input() -> None:
    base = snapshot_key("m", "tmpl", "prefix", "f16")
    assert base == snapshot_key("m", "tmpl", "prefix", "f16")
    others = {
        snapshot_key("m2", "tmpl", "prefix", "f16"),
        snapshot_key("m", "tmpl2", "prefix", "f16"),
        snapshot_key("m", "tmpl", "prefix!", "f16"),
        snapshot_key("m", "tmpl", "prefix", "q8_0"),
    }
    assert base not in others and len(others) == 4


def test_package_round_trip_and_tampering_rejected() -> None:
    manifest, cert = {"model_digest": "abc", "n_tokens": 3}, {"grade": "A"}
    blob = seal_package(manifest, cert, b"snapshot-bytes", SECRET)
    assert open_package(blob, SECRET) == (manifest, cert, b"snapshot-bytes")
    with pytest.raises(PackageError, match="signature"):
        open_package(blob, b"another-secret")
    with pytest.raises(PackageError, match="signature"):
        open_package(blob.replace(b'"grade":"A"', b'"grade":"B"'), SECRET)
    with pytest.raises(PackageError, match="KV part"):
        open_package(blob[:-1] + b"X", SECRET)
    with pytest.raises(PackageError, match="bad magic"):
        open_package(b"{}", SECRET)


def test_certificate_grades() -> None:
    same = ProbeResult((1, 2, 3), (1, 2, 3), top1_matches=3, steps=3, kl=(0.0, 0.0, 0.0))
    drift = ProbeResult((1, 2, 3), (1, 5, 6), top1_matches=2, steps=3, kl=(0.01, 0.3, 0.2))
    perfect = certificate([same, same], "recompute")
    assert perfect["greedy_identical"] and perfect["grade"] == "A" and perfect["top1_agreement"] == 1.0
    mixed = certificate([same, drift], "recompute")
    assert not mixed["greedy_identical"] and mixed["identical_rate"] == 0.5
    assert mixed["token_agreement"] == pytest.approx((1 + 1 / 3) / 2, abs=1e-6)
    assert mixed["top1_agreement"] == pytest.approx(5 / 6, abs=1e-6) and mixed["grade"] == "C"
    assert certificate([], "recompute")["grade"] == "D"


def test_item_spans_and_prune_choice() -> None:
    text = "sys\n## Knowledge\n- likes tea\n- lives in Berlin\n- has a cat\n"
    lines = split_lines(text)
    assert "".join(lines) == text
    tokens, starts = line_offsets(lines, lambda line, i: list(range(len(line.split()))))
    assert len(tokens) == starts[-1]
    spans = item_spans(
        lines,
        starts,
        [("a", "likes tea", 0.9), ("b", "lives in Berlin", 0.2), ("c", "has a cat", 0.5), ("d", "not there", 1.0)],
    )
    assert [s.item_id for s in spans] == ["a", "b", "c"]
    assert [s.line for s in spans] == [2, 3, 4]
    dropped = choose_prune(spans, 0.5)
    assert [s.item_id for s in dropped] == ["c", "b"], "lowest scores, removed from the highest position"
    assert choose_prune(spans, 0) == []
