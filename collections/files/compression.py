"""Plain or compressed files, told apart by their magic bytes, not their names.

Real collections ship plain files named `.gz` (LongEval 2023-02) and gzip files without the
suffix, so every reader opens through here (`tcdb.collections.files.opening`: gzip, bz2 and xz read,
streamed and bounded); writers compress when the name ends in `.gz`, and write through
`files.write_output` (whole or not at all, failures named as the `--out` option).
"""

from __future__ import annotations

import gzip
import stat
from collections.abc import Iterable
from pathlib import Path

from tcdb.collections.files.opening import InputStream, compression_of, open_input, write_output
from tcdb.errors import TcdbError

GZIP_MAGIC = b"\x1f\x8b"
_COUNT_BLOCK = 16 << 20
# Counting markers in gzip files means decompressing them, at a fraction of the speed of reading
# plain bytes: up to this many compressed bytes it costs about a second, beyond it no count.
GZIP_COUNT_LIMIT = 64 << 20


def is_gzip(path: Path) -> bool:
    """Whether the file is compressed (gzip, bz2 or xz: its magic bytes say so)."""
    with open(path, "rb") as probe:
        return compression_of(probe.read(16)) is not None


def open_maybe_gzip(path: Path) -> InputStream:
    """Open for binary reading, decompressing gzip, bz2 or xz (recognised by magic bytes);
    a path that is no readable file, or a bomb, is an `InputError` (`files.open_input`)."""
    return open_input(path)


def write_text(path: Path | str, text: str, *, compresslevel: int = 9,
               field: str = "out") -> None:
    """Write UTF-8 text, gzipped (reproducibly: no timestamp) when the name ends in `.gz`;
    whole or not at all, a failure a `FieldError` of `field` (`files.write_output`)."""
    payload = text.encode("utf-8")
    path = Path(path)
    if path.suffix == ".gz":
        payload = gzip.compress(payload, compresslevel=compresslevel, mtime=0)
    write_output(path, payload, field)


def count_markers(files: Iterable[Path], marker: bytes, *, lines: bool = False) -> int | None:
    """How often `marker` occurs in the files, read in big blocks without parsing: a cheap count
    of documents (``</DOC>`` tags; with `lines`, lines, a last one without its newline included)
    for a progress bar's total.

    None when counting would cost too much (gzip files beyond `GZIP_COUNT_LIMIT` in all), or
    when a file cannot be read: the reader, not a progress bar, reports that.
    """
    try:
        files = list(files)
        if not all(stat.S_ISREG(f.stat().st_mode) for f in files):
            return None  # a pipe is read once, by the reader
        packed = sum(f.stat().st_size for f in files if is_gzip(f))
        if packed > GZIP_COUNT_LIMIT:
            return None
        return sum(_count_in_file(f, marker, lines) for f in files)
    except (OSError, EOFError, TcdbError):
        return None


def _count_in_file(path: Path, marker: bytes, lines: bool) -> int:
    """Occurrences of `marker` (which must not overlap itself), across block boundaries too:
    `tail` keeps the stream's last bytes, too few to hold a whole marker, so none counts twice."""
    count = 0
    edge = len(marker) - 1
    tail = b""
    last = b""
    with open_maybe_gzip(path) as stream:
        while block := stream.read(_COUNT_BLOCK):
            if len(block) >= edge:  # no copy of the block: only its first bytes join the tail
                count += (tail + block[:edge]).count(marker) + block.count(marker)
                window = block
            else:
                window = tail + block
                count += window.count(marker)
            tail = window[-edge:] if edge else b""
            last = block[-len(marker):]
    if lines and last and last != marker:
        count += 1
    return count
