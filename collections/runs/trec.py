"""TREC run files: `topic Q0 doc rank score tag`, plain or gzip — the hot path of run import.

A run of millions of rows must be read at well over a million lines a second, so a correct
file takes a vectorised path (pyarrow's multithreaded CSV parser on single-space columns, then
numpy checks: `tcdb.collections.runs.fast_parse`). Anything that path cannot vouch for — odd
whitespace, a parse failure, a failed check — goes to the plain line-by-line reader here, which
is the reference: it accepts what the format allows and raises the precise `InputError` (file,
line, reason) for the first bad line. Either way nothing partial is returned.

The grammar is trec_eval 10's: lines starting with `#` are comments (ir_metadata's header among
them) and are skipped; fields after the sixth (the tag) are ignored, as trec_eval ignores them
(its own test file `results.trunc` has them). Each value is checked against the one set of
limits (`tcdb.limits`): topic and document ids are one word without control characters and fit
their columns; the rank is a decimal integer within INTEGER, the score a finite decimal
(`tcdb.collections.files.numeric`). The run tag is a name, checked by the name rule at import.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tcdb.collections.files.bad_lines import BadLines, one_line
from tcdb.collections.files.compression import write_text
from tcdb.collections.files.lines import byte_lines
from tcdb.collections.files.numeric import parse_integer, parse_score
from tcdb.collections.runs.fast_parse import Parsed, parse_fast
from tcdb.collections.sources.records import Rejected
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

_BOM = b"\xef\xbb\xbf"
_FORMAT = ("expected 6 whitespace-separated columns `topic Q0 doc rank score tag` (fields after "
           "the tag are ignored)")


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
    rejected: list[Rejected] = field(default_factory=list)  # lines set aside (--on-bad-lines)

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
    from tcdb.collections.files.opening import check_input

    digest = hashlib.sha256()
    with open(check_input(path, pipe=False), "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def read_bytes_maybe_gzip(path: Path) -> tuple[bytes, bytes]:
    """(raw file bytes, content bytes without a UTF-8 BOM): gzip, bz2 and xz are recognised by
    their magic bytes, not the suffix, because downloaded files are often misnamed; they are
    decompressed in chunks and refused past the expansion bounds (`files.read_input`)."""
    from tcdb.collections.files.opening import read_input

    return read_input(path)


def read_text(path: Path) -> str:
    """A (possibly compressed) UTF-8 text file as str; undecodable bytes name their line.

    Shared by the qrels, topics, trec_eval and judgment readers. A leading BOM is dropped.
    """
    from tcdb.collections.files.opening import read_input_text

    return read_input_text(path)


def _decode_error(path: Path, data: bytes, exc: UnicodeDecodeError) -> InputError:
    """The InputError for bad UTF-8 at `exc.start`: which line, which byte of it."""
    from tcdb.collections.files.opening import utf8_error

    return utf8_error(path, data, exc)


def read_run(path: Path, checksum: str | None = None,
             bad: BadLines | None = None) -> RunFile:
    """Read and fully validate a TREC run file; raise `InputError` on the first bad line, or
    under `bad` that keeps going (`--on-bad-lines warn|skip`) set bad lines aside
    (`RunFile.rejected`).

    `checksum`: the file's sha256 when the caller has it already (`checksum_file`).
    """
    path = Path(path)
    raw, data = read_bytes_maybe_gzip(path)
    # hashlib releases the GIL on large buffers: hash while parsing rather than after.
    with ThreadPoolExecutor(max_workers=1) as pool:
        digest = None if checksum else pool.submit(lambda: hashlib.sha256(raw).hexdigest())
        parsed = parse_fast(data)
        if parsed is None:  # the fast path vouches only for a file without a bad line
            parsed = _parse_slow(path, data, bad)
        if digest is not None:
            checksum = digest.result()
    assert checksum is not None
    tag, topics, docs, ranks, scores, lines, coding = parsed
    return RunFile(path, tag, checksum, topics, docs, ranks, scores, lines, coding,
                   list(bad.rejected) if bad is not None else [])


def _parse_slow(path: Path, data: bytes, bad: BadLines | None = None) -> Parsed:
    """Line-by-line reference reader: accepts any ASCII whitespace, names the first bad line
    (or sets bad lines aside into `bad`, `one_line`)."""
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
    for number, raw_line in enumerate(byte_lines(data), start=1):
        with one_line(bad):
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
                    f"run tag {tag_bytes.decode()!r} differs from tag {tag.decode()!r} on "
                    f"line {tag_line}: a run file holds one run",
                )
            first = seen.setdefault((topic, doc), number)
            if first != number:
                raise InputError(
                    path,
                    number,
                    f"document {doc!r} appears twice for topic {topic!r} (first on line "
                    f"{first})",
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
