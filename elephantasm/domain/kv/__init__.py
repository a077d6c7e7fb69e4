"""Pure pieces of model-level memory (DESIGN §9): snapshot keys and file format, memory-package
manifests and signatures, quality-certificate arithmetic, token-range maps of pack items."""

from elephantasm.domain.kv.package import PackageError, open_package, seal_package
from elephantasm.domain.kv.quality import ProbeResult, certificate, grade
from elephantasm.domain.kv.ranges import ItemSpan, choose_prune, item_spans, split_lines
from elephantasm.domain.kv.snapshot import (
    SnapshotFormatError,
    decode_snapshot,
    encode_snapshot,
    snapshot_key,
    token_ids_hash,
)

__all__ = [
    "ItemSpan",
    "PackageError",
    "ProbeResult",
    "SnapshotFormatError",
    "certificate",
    "choose_prune",
    "decode_snapshot",
    "encode_snapshot",
    "grade",
    "item_spans",
    "open_package",
    "seal_package",
    "snapshot_key",
    "split_lines",
    "token_ids_hash",
]
