"""Plain or gzip files, told apart by their magic bytes, not their names.

Real collections ship plain files named `.gz` (LongEval 2023-02) and gzip files without the
suffix, so every reader opens through here; writers compress when the name ends in `.gz`.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import BinaryIO

GZIP_MAGIC = b"\x1f\x8b"


def open_maybe_gzip(path: Path) -> BinaryIO:
    """Open for binary reading, decompressing gzip (recognised by its magic bytes)."""
    with open(path, "rb") as probe:
        magic = probe.read(2)
    if magic == GZIP_MAGIC:
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


def write_text(path: Path | str, text: str, *, compresslevel: int = 9) -> None:
    """Write UTF-8 text, gzipped (reproducibly: no timestamp) when the name ends in `.gz`."""
    payload = text.encode("utf-8")
    path = Path(path)
    if path.suffix == ".gz":
        payload = gzip.compress(payload, compresslevel=compresslevel, mtime=0)
    path.write_bytes(payload)
