"""TREC run files: `topic Q0 doc rank score tag`, plain or gzip — the hot path of run import.

A run of millions of rows must be read at well over a million lines a second, so a correct
file takes a vectorised path (pyarrow's multithreaded CSV parser on single-space columns, then
numpy checks). Anything that path cannot vouch for — odd whitespace, a parse failure, a failed
check — goes to a plain line-by-line reader that is the reference: it accepts what the format
allows and raises the precise `InputError` (file, line, reason) for the first bad line. Either
way nothing partial is returned.

The grammar is trec_eval 10's: lines starting with `#` are comments (ir_metadata's header among
them) and are skipped; fields after the sixth (the tag) are ignored, as trec_eval ignores them
(its own test file `results.trunc` has them). Each value is checked against the one set of
limits (`tcdb.limits`): topic and document ids are one word without control characters and fit
their columns; the rank is a decimal integer within INTEGER, the score a finite decimal
(`tcdb.collections.numeric`). The run tag is a name, checked by the name rule at import.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tcdb.collections.compression import write_text
from tcdb.collections.numeric import parse_integer, parse_score
from tcdb.errors import InputError
from tcdb.limits import (
    DOC_ID_LENGTH,
    RANK_RANGE,
    TOPIC_ID_LENGTH,
    Refused,
    check_identifier,
)

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

_BOM = b"\xef\xbb\xbf"
_COLUMNS = ["topic", "q0", "doc", "rank", "score", "tag"]
_FORMAT = ("expected 6 whitespace-separated columns `topic Q0 doc rank score tag` (fields after "
           "the tag are ignored)")
_TABS_TO_SPACES = bytes.maketrans(b"\t", b" ")
# A rank column starting `0x` in single-space columns (what pyarrow parsed).
_HEX_RANK = re.compile(rb"(?m)^[^ \n]* [^ \n]* [^ \n]* [+-]?0[xX]")


@dataclass(eq=False, slots=True)
class RunFile:
    """One parsed run file: its identity (tag, checksum) and its rows as parallel columns.

    Columns rather than row objects because the consumer bulk-loads millions of rows; `lines`
    keeps each row's 1-based line number so later checks can still point into the file.
    """

    path: Path
    tag: str
    checksum: str  # sha256 of the raw file bytes (compressed bytes for .gz)
    topics: list[str]
    docs: list[str]
    ranks: np.ndarray  # int64
    scores: np.ndarray  # float64
    lines: np.ndarray  # int64, 1-based
    topic_coding: tuple[np.ndarray, list[str]] | None = None  # see topic_codes()

    def __len__(self) -> int:
        return len(self.topics)

    def topic_codes(self) -> tuple[np.ndarray, list[str]]:
        """(code per row, the distinct topic ids): a run names ~50 topics in 50,000 rows, so
        resolving the distinct ids and indexing by code beats hashing every row's string."""
        if self.topic_coding is None:
            import pandas as pd

            codes, names = pd.factorize(np.asarray(self.topics, dtype=object))
            self.topic_coding = (codes, list(names))
        return self.topic_coding

    def to_frame(self) -> pd.DataFrame:
        """The rows as a DataFrame (topic, doc, rank, score, line) for vectorised joins."""
        import pandas as pd

        return pd.DataFrame(
            {
                "topic": self.topics,
                "doc": self.docs,
                "rank": self.ranks,
                "score": self.scores,
                "line": self.lines,
            }
        )


def checksum_file(path: Path) -> str:
    """sha256 of a file's bytes, streamed: the identity under which a run file is recorded.
    The file is read again to parse it, so a pipe is refused (`files.check_input`)."""
    from tcdb.collections.files import check_input

    digest = hashlib.sha256()
    with open(check_input(path, pipe=False), "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def read_bytes_maybe_gzip(path: Path) -> tuple[bytes, bytes]:
    """(raw file bytes, content bytes without a UTF-8 BOM): gzip, bz2 and xz are recognised by
    their magic bytes, not the suffix, because downloaded files are often misnamed; they are
    decompressed in chunks and refused past the expansion bounds (`files.read_input`)."""
    from tcdb.collections.files import read_input

    return read_input(path)


def read_text(path: Path) -> str:
    """A (possibly compressed) UTF-8 text file as str; undecodable bytes name their line.

    Shared by the qrels, topics, trec_eval and judgment readers. A leading BOM is dropped.
    """
    from tcdb.collections.files import read_input_text

    return read_input_text(path)


def _decode_error(path: Path, data: bytes, exc: UnicodeDecodeError) -> InputError:
    """The InputError for bad UTF-8 at `exc.start`: which line, which byte of it."""
    from tcdb.collections.files import utf8_error

    return utf8_error(path, data, exc)


def read_run(path: Path, checksum: str | None = None) -> RunFile:
    """Read and fully validate a TREC run file; raise `InputError` on the first bad line.

    `checksum`: the file's sha256 when the caller has it already (`checksum_file`).
    """
    path = Path(path)
    raw, data = read_bytes_maybe_gzip(path)
    # hashlib releases the GIL on large buffers: hash while parsing rather than after.
    with ThreadPoolExecutor(max_workers=1) as pool:
        digest = None if checksum else pool.submit(lambda: hashlib.sha256(raw).hexdigest())
        parsed = _parse_fast(data)
        if parsed is None:
            parsed = _parse_slow(path, data)
        if digest is not None:
            checksum = digest.result()
    assert checksum is not None
    tag, topics, docs, ranks, scores, lines, coding = parsed
    return RunFile(path, tag, checksum, topics, docs, ranks, scores, lines, coding)


_Parsed = tuple[str, list[str], list[str], np.ndarray, np.ndarray, np.ndarray,
                tuple[np.ndarray, list[str]] | None]


def _parse_fast(data: bytes) -> _Parsed | None:
    """Vectorised parse of a well-formed file; None whenever it cannot vouch for the result."""
    if not data or data.isspace():
        return None
    if b"\r" in data and data.count(b"\r") != data.count(b"\r\n"):
        return None  # a lone CR would shift pyarrow's line numbering against ours
    if b"\t" in data:
        data = data.translate(_TABS_TO_SPACES)
    try:
        import pyarrow.compute as pc
    except ImportError:  # pragma: no cover - pyarrow comes with pandas/streamlit
        return None
    data = _blank_comments(data)
    table = _read_table(data)
    if table is None:
        # Aligned columns or trailing spaces: squeeze runs of spaces (line count unchanged).
        squeezed = _squeeze_spaces(data)
        if squeezed == data:
            return None
        data = _blank_comments(squeezed)
        table = _read_table(data)
        if table is None:
            return None
    n = table.num_rows
    if n == 0:
        return None
    if _maybe_hex(data) and _HEX_RANK.search(data):
        return None  # pyarrow reads a hexadecimal rank; trec_eval's atoi does not
    lines = _row_lines(data, n)
    if lines is None:
        return None
    scores = table.column("score").to_numpy()
    if not np.isfinite(scores).all():
        return None
    tag_col = table.column("tag")
    tag = tag_col[0].as_py()
    if not pc.all(pc.equal(tag_col, tag)).as_py():
        return None
    topic_codes = table.column("topic").dictionary_encode()
    dictionary = topic_codes.chunk(0).dictionary
    if not all(chunk.dictionary.equals(dictionary) for chunk in topic_codes.chunks):
        return None  # pyarrow unifies dictionaries across chunks today; do not rely on it
    topic_index = np.concatenate([chunk.indices.to_numpy() for chunk in topic_codes.chunks])
    if not _within_limits(table, dictionary):
        return None
    unique = _pairs_unique(topic_index, table.column("doc"))
    if unique is None:
        pairs = table.select(["topic", "doc"]).group_by(["topic", "doc"]).aggregate([])
        unique = pairs.num_rows == n
    if not unique:
        return None
    names: list[str] = dictionary.to_pylist()
    topics: list[str] = np.array(names, dtype=object)[topic_index].tolist()
    docs: list[str] = table.column("doc").to_pylist()
    ranks = table.column("rank").to_numpy()
    return (tag, topics, docs, np.ascontiguousarray(ranks), np.ascontiguousarray(scores), lines,
            (topic_index.astype(np.int64), names))


def _blank_comments(data: bytes) -> bytes:
    """Comment lines (a `#` first) emptied, their newline kept so line numbers still hold.

    Costs two substring searches when there are none; an ir_metadata header is a few dozen
    lines at the top, joined around in one copy.
    """
    if b"#" not in data:  # one memchr pass
        return data
    start = 0 if data.startswith(b"#") else data.find(b"\n#") + 1
    if start == 0 and not data.startswith(b"#"):
        return data
    pieces: list[bytes] = []
    kept = 0
    while True:
        pieces.append(data[kept:start])
        end = data.find(b"\n", start)
        if end == -1:
            kept = len(data)
            break
        kept = end
        following = data.find(b"\n#", end)
        if following == -1:
            break
        start = following + 1
    pieces.append(data[kept:])
    return b"".join(pieces)


def _within_limits(table: pa.Table, topics: pa.Array) -> bool:
    """Whether every id and rank is within `tcdb.limits`, checked on whole columns; False sends
    the file to the line reader, which names the first value that is not."""
    import pyarrow.compute as pc

    names = topics.to_pylist()  # the distinct topics: a few dozen
    if any(len(topic) > TOPIC_ID_LENGTH or topic.startswith("#") for topic in names):
        return False  # too long, or an indented comment line that parsed as a row
    docs = table.column("doc")
    longest = pc.max(pc.binary_length(docs)).as_py()  # bytes: characters only when needed
    if longest > DOC_ID_LENGTH and pc.max(pc.utf8_length(docs)).as_py() > DOC_ID_LENGTH:
        return False
    # No whitespace or control character inside an id: "printable" rules out both (and a few
    # format characters such as U+200B, which the line reader then judges exactly).
    for column in (topics, docs):
        if not pc.all(pc.ascii_is_printable(column)).as_py() and \
                not pc.all(pc.utf8_is_printable(column)).as_py():  # non-ASCII ids: 6x the cost
            return False
    ranks = table.column("rank")
    low, high = RANK_RANGE
    bounds = pc.min_max(ranks).as_py()
    return low <= bounds["min"] and bounds["max"] <= high


def _maybe_hex(data: bytes) -> bool:
    """Whether `0x`/`0X` occurs at all, by one memchr pass for a rare letter first."""
    return (b"x" in data and b"0x" in data) or (b"X" in data and b"0X" in data)


def _squeeze_spaces(data: bytes) -> bytes:
    """Single spaces between columns and none at line ends, keeping every newline.

    bytes.replace passes (C speed, a no-op test when absent) rather than one regex, which
    would rewrite every line end of a million-line file.
    """
    while b"  " in data:
        data = data.replace(b"  ", b" ")
    for edge, bare in ((b" \n", b"\n"), (b" \r\n", b"\r\n"), (b"\n ", b"\n")):
        if edge in data:
            data = data.replace(edge, bare)
    return data.lstrip(b" ")


def _read_table(data: bytes) -> pa.Table | None:
    """pyarrow's parser on single-space columns with typed rank/score; None if it refuses."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    try:
        return pcsv.read_csv(
            pa.BufferReader(data),
            read_options=pcsv.ReadOptions(column_names=_COLUMNS, block_size=1 << 24),
            parse_options=pcsv.ParseOptions(
                delimiter=" ", quote_char=False, escape_char=False, ignore_empty_lines=True
            ),
            convert_options=pcsv.ConvertOptions(
                column_types={
                    "topic": pa.string(),
                    "q0": pa.string(),
                    "doc": pa.string(),
                    "rank": pa.int64(),
                    "score": pa.float64(),
                    "tag": pa.string(),
                },
                null_values=[],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except pa.ArrowException:
        return None


_MIX = np.uint64(0x9E3779B97F4A7C15)
_MAX_FINGERPRINT_WIDTH = 256


def _pairs_unique(topic_index: np.ndarray, docs: pa.ChunkedArray) -> bool | None:
    """Whether all (topic, doc) pairs differ, by a vectorised 64-bit fingerprint of each pair.

    Distinct fingerprints prove distinct pairs; a shared one may be a collision, so it answers
    False and the exact line-by-line reader decides. None when doc ids are too long to pad
    cheaply. Several times faster than hashing the strings in a pyarrow group-by.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(topic_index)
    longest = pc.max(pc.binary_length(docs)).as_py()
    width = (longest + 7) // 8 * 8
    if width > _MAX_FINGERPRINT_WIDTH:
        return None
    # Doc ids hold no spaces, so right-padding with spaces keeps distinct ids distinct.
    try:
        padded = pc.ascii_rpad(docs, width=width, padding=" ").combine_chunks()
    except pa.ArrowException:
        return None
    _, offsets_buffer, data_buffer = padded.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int32)[padded.offset : padded.offset + n + 1]
    start, end = int(offsets[0]), int(offsets[-1])
    if end - start != n * width:
        return None
    block = np.frombuffer(data_buffer, dtype=np.uint8)[start:end]
    words = np.ascontiguousarray(block).view(np.uint64).reshape(n, width // 8)
    with np.errstate(over="ignore"):
        fingerprint = (topic_index.astype(np.uint64) + np.uint64(1)) * _MIX
        for column in range(width // 8):
            fingerprint ^= words[:, column]
            fingerprint *= _MIX
            fingerprint ^= fingerprint >> np.uint64(29)
    fingerprint.sort()  # in place; faster than a hash table at millions of rows
    return not bool((fingerprint[1:] == fingerprint[:-1]).any())


def _row_lines(data: bytes, n_rows: int) -> np.ndarray | None:
    """1-based line numbers of the n non-blank lines, cheaply when there are no blank lines."""
    n_lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    if n_lines == n_rows:
        return np.arange(1, n_rows + 1, dtype=np.int64)
    buf = np.frombuffer(data, dtype=np.uint8)
    starts = np.concatenate(([0], np.flatnonzero(buf == 10) + 1))
    starts = starts[starts < len(buf)]
    first = buf[starts]
    lines = np.flatnonzero((first != 10) & (first != 13)).astype(np.int64) + 1
    return lines if len(lines) == n_rows else None


def _parse_slow(path: Path, data: bytes) -> _Parsed:
    """Line-by-line reference reader: accepts any ASCII whitespace, names the first bad line."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _decode_error(path, data, exc) from exc
    topics: list[str] = []
    docs: list[str] = []
    ranks: list[int] = []
    scores: list[float] = []
    lines: list[int] = []
    seen: dict[tuple[str, str], int] = {}
    tag: bytes | None = None
    tag_line = 0
    for number, raw_line in enumerate(data.split(b"\n"), start=1):
        parts = raw_line.split()
        if not parts or parts[0].startswith(b"#"):
            continue
        if len(parts) < 6:
            raise InputError(path, number, f"{_FORMAT}, found {len(parts)}")
        topic_bytes, _q0, doc_bytes, rank_text, score_text, tag_bytes = parts[:6]
        try:
            rank = parse_integer(rank_text, "rank", RANK_RANGE)
            score = parse_score(score_text)
            topic = check_identifier(topic_bytes.decode(), "topic id", TOPIC_ID_LENGTH)
            doc = check_identifier(doc_bytes.decode(), "document id", DOC_ID_LENGTH)
        except Refused as exc:
            raise InputError(path, number, str(exc)) from None
        if tag is None:
            tag, tag_line = tag_bytes, number
        elif tag_bytes != tag:
            raise InputError(
                path,
                number,
                f"run tag {tag_bytes.decode()!r} differs from tag {tag.decode()!r} on line "
                f"{tag_line}: a run file holds one run",
            )
        first = seen.setdefault((topic, doc), number)
        if first != number:
            raise InputError(
                path,
                number,
                f"document {doc!r} appears twice for topic {topic!r} (first on line {first})",
            )
        topics.append(topic)
        docs.append(doc)
        ranks.append(rank)
        scores.append(score)
        lines.append(number)
    if tag is None:
        raise InputError(path, None, "run file has no rows")
    return (
        tag.decode(),
        topics,
        docs,
        np.array(ranks, dtype=np.int64),
        np.array(scores, dtype=np.float64),
        np.array(lines, dtype=np.int64),
        None,
    )


def write_run(path: Path, rows: Iterable[tuple[str, str, int, float]], tag: str) -> int:
    """Write (topic, doc, rank, score) rows as a TREC run; gzip when the name ends in `.gz`.

    Refuses ids or a tag containing whitespace, which would silently shift columns for every
    reader. Returns the number of rows written.
    """
    if not tag or len(tag.split()) != 1 or tag.strip() != tag:
        raise ValueError(f"run tag {tag!r} must be one non-empty word")
    out: list[str] = []
    for topic, doc, rank, score in rows:
        out.append(f"{topic} Q0 {doc} {int(rank)} {float(score)!r} {tag}\n")
    text = "".join(out)
    if len(text.split()) != 6 * len(out):
        bad = next(i for i, line in enumerate(out) if len(line.split()) != 6)
        raise ValueError(f"row {bad + 1} has an empty id or one with whitespace: {out[bad]!r}")
    write_text(path, text, compresslevel=6)
    return len(out)
