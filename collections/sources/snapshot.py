"""Where a snapshot comes from: local files, or what `open_source` picks from the user's words
(local files, an ir_datasets id, a Cocktail folder, with documents' source labels).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from tcdb.collections.documents.jsonl import (
    count_jsonl_documents,
    is_jsonl_path,
    read_jsonl_documents,
)
from tcdb.collections.documents.trec import (
    count_trec_documents,
    iter_document_files,
    read_trec_documents,
)
from tcdb.collections.files.bad_lines import BadLines, keeps_going
from tcdb.collections.sources.fingerprint import file_fingerprint
from tcdb.collections.sources.records import DocumentRecord, QrelRecord, Rejected, TopicRecord
from tcdb.collections.sources.source import SnapshotSource
from tcdb.errors import FieldError, InputError, NotFoundError
from tcdb.vocabulary import OnBadLines

__all__ = ["LocalSource", "SnapshotSource", "file_fingerprint", "open_source"]


class LocalSource:
    """A snapshot in local files: TREC SGML or JSONL documents, plus topic and qrels files.

    The documents are one file or a directory. TREC SGML (plain or gzip) is the default; files
    named ``*.jsonl`` / ``*.jsonl.gz`` (BEIR's ``corpus.jsonl`` included) are read as JSONL. A
    directory must hold one kind only. Topics and qrels are read by
    `tcdb.collections.topics.formats` and
    `tcdb.collections.qrels.formats`, which detect their formats (TREC, TSV, BEIR).
    """

    kind = "local"

    def __init__(self, docs: Path | str, topics: Path | str | None = None,
                 qrels: Path | str | None = None,
                 on_bad_lines: OnBadLines = OnBadLines.error) -> None:
        self.keep_going = keeps_going(on_bad_lines)  # bad lines set aside, not refused
        self.bad = BadLines(self.keep_going)
        self.docs_path = _existing(Path(docs), "documents")
        self.topics_path = _existing(Path(topics), "topics") if topics is not None else None
        self.qrels_path = _existing(Path(qrels), "qrels") if qrels is not None else None
        self.docs_format = _docs_format(self.docs_path)
        self.description = str(self.docs_path)

    def __repr__(self) -> str:
        return f"LocalSource({self.description!r}, format={self.docs_format!r})"

    def fingerprint(self) -> str:
        """Hash of the source kind, the docs format and every input file's name, size and mtime."""
        return file_fingerprint(
            f"{self.kind}:{self.docs_format}",
            [("docs", self.docs_path), ("topics", self.topics_path), ("qrels", self.qrels_path)],
        )

    def documents(self) -> Iterator[DocumentRecord | Rejected]:
        """Stream the documents with the reader for their format (and the lines it set aside,
        when it keeps going)."""
        if self.docs_format == "trec":
            return read_trec_documents(self.docs_path, self.bad)
        return self._jsonl_documents()

    def _jsonl_documents(self) -> Iterator[DocumentRecord | Rejected]:
        for file in iter_document_files(self.docs_path):
            yield from read_jsonl_documents(file, self.bad)

    def topics(self) -> Iterator[TopicRecord | Rejected]:
        """The topics of the topics file (then the lines set aside); none without a file."""
        if self.topics_path is None:
            return iter(())
        from tcdb.collections.topics.formats import read_topics

        bad = BadLines(self.keep_going)
        return iter([*read_topics(self.topics_path, bad), *bad.rejected])

    def qrels(self) -> Iterator[QrelRecord | Rejected] | None:
        """The judgments of the qrels file (then the lines set aside); None without a file."""
        if self.qrels_path is None:
            return None
        from tcdb.collections.qrels.formats import read_qrels

        bad = BadLines(self.keep_going)
        judgments: list[QrelRecord | Rejected] = [*read_qrels(self.qrels_path, bad)]
        judgments += bad.rejected
        return iter(judgments)

    def documents_count_hint(self) -> int | None:
        """Lines of JSONL, ``</DOC>`` lines of TREC SGML, counted in big blocks without parsing
        (seconds for gigabytes); None for gzip files too large to decompress twice."""
        files = iter_document_files(self.docs_path)
        if self.docs_format == "jsonl":
            return count_jsonl_documents(files)
        return count_trec_documents(files)


def open_source(irds_id: str | None = None, docs: Path | str | None = None,
                topics: Path | str | None = None,
                qrels: Path | str | None = None,
                labels: Path | str | None = None,
                cocktail: Path | str | None = None,
                on_bad_lines: OnBadLines = OnBadLines.error) -> SnapshotSource:
    """The source a snapshot spec or the CLI names: an ir_datasets id, local files, or a
    Cocktail dataset folder (`tcdb.collections.sources.cocktail`); with `labels`, a source-label
    file
    (`tcdb.collections.sources.source_labels`) says who wrote what."""
    if labels is not None:
        from tcdb.collections.sources.source_labels import LabelledSource

        return LabelledSource(open_source(irds_id, docs, topics, qrels, cocktail=cocktail,
                                          on_bad_lines=on_bad_lines),
                              _existing(Path(labels), "source labels"))
    if keeps_going(on_bad_lines) and docs is None:
        raise FieldError("on_bad_lines", "sets aside bad lines of local files (docs, topics, "
                         "qrels); an ir_datasets or Cocktail source is read as it is")
    if cocktail is not None:
        if irds_id is not None or docs is not None or topics is not None or qrels is not None:
            raise FieldError("cocktail", "a Cocktail dataset folder holds its documents, "
                             "topics and qrels: give it alone")
        from tcdb.collections.sources.cocktail import CocktailSource

        return CocktailSource(_existing(Path(cocktail), "Cocktail dataset"))
    if irds_id is not None:
        if docs is not None or topics is not None or qrels is not None:
            raise FieldError("irds/docs",
                             f"give an ir_datasets id ({irds_id}) or local files, not both")
        from tcdb.collections.sources.ir_datasets_source import IrdsSource

        return IrdsSource(irds_id)
    if docs is None:
        raise FieldError("irds/docs", "a snapshot source needs an ir_datasets id or "
                         "documents")
    return LocalSource(docs, topics, qrels, on_bad_lines)


def _existing(path: Path, role: str) -> Path:
    """The absolute path, or a NotFoundError naming the missing one."""
    if not path.exists():
        raise NotFoundError(f"{role} path does not exist: {path}")
    return path.resolve()


def _docs_format(path: Path) -> str:
    """'jsonl' or 'trec', from the file names; a directory mixing both is refused."""
    files = list(iter_document_files(path))
    if not files:
        raise InputError(path, None, "no document files")
    jsonl = [f for f in files if is_jsonl_path(f)]
    if not jsonl:
        return "trec"
    if len(jsonl) == len(files):
        return "jsonl"
    other = next(f for f in files if not is_jsonl_path(f))
    raise InputError(path, None, f"mixes JSONL and other files ({jsonl[0].name}, {other.name})")
