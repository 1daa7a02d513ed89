"""The fast path of run import: a well-formed TREC run parsed by pyarrow and checked with numpy.

A run of millions of rows must be read at well over a million lines a second, so a correct file
is parsed by pyarrow's multithreaded CSV parser on single-space columns and checked on whole
columns (limits, one tag, distinct (topic, doc) pairs by a 64-bit fingerprint). It is separate
from `tcdb.collections.runs.trec` because it is an optimisation, not the grammar: it never raises,
it answers None whenever it cannot vouch for the result, and the line-by-line reference reader
there then decides, naming the first bad line.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from tcdb.limits import DOC_ID_LENGTH, RANK_RANGE, TOPIC_ID_LENGTH

if TYPE_CHECKING:
    import pyarrow as pa

_COLUMNS = ["topic", "q0", "doc", "rank", "score", "tag"]
_TABS_TO_SPACES = bytes.maketrans(b"\t", b" ")
# A rank column starting `0x` in single-space columns (what pyarrow parsed).
_HEX_RANK = re.compile(rb"(?m)^[^ \n]* [^ \n]* [^ \n]* [+-]?0[xX]")

# (tag, topics, docs, ranks, scores, line numbers, (topic code per row, distinct topics) or None)
Parsed = tuple[str, list[str], list[str], np.ndarray, np.ndarray, np.ndarray,
               tuple[np.ndarray, list[str]] | None]


def parse_fast(data: bytes) -> Parsed | None:
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
    scores = _numpy(table.column("score").chunks)
    if not np.isfinite(scores).all():
        return None
    tag_col = table.column("tag")
    tag = tag_col[0].as_py()
    if pc.count_distinct(tag_col).as_py() != 1:  # (comparing with a Python str loads pandas)
        return None
    topic_codes = table.column("topic").dictionary_encode()
    dictionary = topic_codes.chunk(0).dictionary
    if not all(chunk.dictionary.equals(dictionary) for chunk in topic_codes.chunks):
        return None  # pyarrow unifies dictionaries across chunks today; do not rely on it
    topic_index = _numpy([chunk.indices for chunk in topic_codes.chunks])
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
    ranks = _numpy(table.column("rank").chunks)
    return (tag, topics, docs, np.ascontiguousarray(ranks), np.ascontiguousarray(scores), lines,
            (topic_index.astype(np.int64), names))


def _numpy(chunks: list[pa.Array]) -> np.ndarray:
    """Numeric arrays without nulls (`_read_table` allows none) as one writable numpy array,
    from their data buffers: pyarrow's `to_numpy` imports pandas, ~0.3 s of a one-run import
    (issue 41, Build 8)."""
    dtype = np.dtype(chunks[0].type.to_pandas_dtype())  # int32, int64, float64: numpy's own
    return np.concatenate([np.frombuffer(chunk.buffers()[1], dtype=dtype, count=len(chunk),
                                         offset=chunk.offset * dtype.itemsize)
                           for chunk in chunks])


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
