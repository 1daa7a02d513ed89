"""Who wrote each document, from a side file: for corpora whose format has no field for it.

A source-label file is tab-separated, one document a line: ``doc_id<TAB>source[<TAB>twin_of]``
(``source``: ``human``, ``llm``, …; ``twin_of``: the id of the original an LLM document was
rewritten from). Blank lines and lines starting with ``#`` are skipped, and so is a first line
``doc_id<TAB>source…`` (a header). `LabelledSource` wraps any snapshot source with such a file:
the labels go onto its documents as they stream past. A document the file labels otherwise than
its own field, or a file line naming no document of the source, is an error: never a label
silently dropped or overridden.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

from tcdb.collections.files.compression import open_maybe_gzip
from tcdb.collections.sources.fingerprint import file_fingerprint
from tcdb.collections.sources.records import DocumentRecord, QrelRecord, Rejected, TopicRecord
from tcdb.collections.sources.source import SnapshotSource
from tcdb.errors import InputError

__all__ = ["LabelledSource", "SOURCE_LABEL_LENGTH", "check_label", "read_source_labels"]

SOURCE_LABEL_LENGTH = 32  # the column's width: a longer label is refused, never cut

Label = tuple[str, str | None, int]  # source, twin_of, line


def read_source_labels(path: Path | str) -> dict[str, Label]:
    """doc id → (source, twin_of, line) of a source-label file; bad lines raise `InputError`."""
    path = Path(path)  # a missing path, a directory…: refused by open_maybe_gzip
    labels: dict[str, Label] = {}
    with open_maybe_gzip(path) as stream:
        for number, raw in enumerate(stream, start=1):
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError:
                raise InputError(path, number, "not UTF-8 text") from None
            if not line.strip() or line.startswith("#"):
                continue
            fields = [f.strip() for f in line.split("\t")]
            if number == 1 and fields[:2] == ["doc_id", "source"]:
                continue
            if len(fields) not in (2, 3) or not fields[0] or not fields[1]:
                raise InputError(path, number, "expected doc_id<TAB>source[<TAB>twin_of], got "
                                 f"{len(fields)} field(s): {line[:80]!r}")
            doc_id, source = fields[0], fields[1]
            check_label(source, path, number)
            if doc_id in labels:
                raise InputError(path, number, f"document {doc_id!r} labelled twice (first at "
                                 f"line {labels[doc_id][2]})")
            twin = fields[2] if len(fields) == 3 and fields[2] else None
            labels[doc_id] = (source, twin, number)
    return labels


def check_label(source: str, where: Path | str, line: int | None) -> None:
    """A label the database can hold: at most `SOURCE_LABEL_LENGTH` characters."""
    if len(source) > SOURCE_LABEL_LENGTH:
        raise InputError(where, line, f"source label {source[:40]!r}… is longer than "
                         f"{SOURCE_LABEL_LENGTH} characters")


class LabelledSource:
    """A snapshot source whose documents get their source and twin from a side file."""

    def __init__(self, inner: SnapshotSource, labels_path: Path | str) -> None:
        self.inner = inner
        self.labels_path = Path(labels_path).resolve()
        if not self.labels_path.is_file():
            raise InputError(labels_path, None, "no such file")
        self.description = inner.description

    def __getattr__(self, name: str) -> object:  # empty_folder() and the like of the inner one
        return getattr(self.inner, name)

    def fingerprint(self) -> str:
        return file_fingerprint(f"labelled:{self.inner.fingerprint()}",
                                [("labels", self.labels_path)])

    def documents(self) -> Iterator[DocumentRecord | Rejected]:
        """The inner source's documents, labelled; unused or contradicting lines raise."""
        labels = read_source_labels(self.labels_path)
        used: set[str] = set()
        for record in self.inner.documents():
            if isinstance(record, Rejected):  # a line its reader set aside: passed on
                yield record
                continue
            label = labels.get(record.doc_id)
            if label is None:
                yield record
                continue
            source, twin, line = label
            if (record.source is not None and record.source != source) or (
                    record.twin_of is not None and twin is not None and record.twin_of != twin):
                raise InputError(self.labels_path, line,
                                 f"document {record.doc_id!r} is labelled {source!r}"
                                 f"{f' (twin of {twin!r})' if twin else ''} here but "
                                 f"{record.source!r}"
                                 f"{f' (twin of {record.twin_of!r})' if record.twin_of else ''}"
                                 " by its own fields")
            used.add(record.doc_id)
            yield dataclasses.replace(record, source=source, twin_of=twin or record.twin_of)
        unused = [(line, doc_id) for doc_id, (_, _, line) in labels.items() if doc_id not in used]
        if unused:
            line, doc_id = min(unused)
            raise InputError(self.labels_path, line,
                             f"document {doc_id!r} is not in {self.description}; "
                             f"{len(unused):,} labelled document(s) are not")

    def topics(self) -> Iterator[TopicRecord | Rejected]:
        return self.inner.topics()

    def qrels(self) -> Iterator[QrelRecord | Rejected] | None:
        return self.inner.qrels()

    def documents_count_hint(self) -> int | None:
        return self.inner.documents_count_hint()
