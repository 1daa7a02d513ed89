"""Write the on-disk layout that ir-datasets-longeval reads for ``longeval-web``, offline.

Tests, benchmarks and the demo need LongEval-shaped data without the real (large, licensed)
download. `ir_datasets_longeval` registers all 15 ``longeval-web`` snapshots at once and fails if
any folder is missing, so this writer always creates all of them: the snapshots given get their
documents, queries and qrels, the others an empty placeholder. Under ``$IR_DATASETS_HOME``::

    longeval-web/release_2025_p1/release_2025_p1/French/
        collection_db.db                           mapping(id, url, last_updated_at, date)
        LongEval Train Collection/
            Trec/<label>_fr/part-00000.trec …      + metadata.json
            queries/<label>_queries.txt            "<query id>\\t<text>"
            qrels/<label>_fr/qrels_processed.txt   "<query id> 0 <doc id> <grade>"
    longeval-web/LongEval Test Collection/LongEval Test Collection/
        Trec/…, queries/…, qrels/…                 (2023-03 … 2023-08; no URL mapping)

Like the real files, DOCNOs carry a ``doc`` prefix that the extension strips (``str.strip("doc")``,
which also eats trailing d/o/c characters, hence the id check below). Only the train collection has
a URL mapping in the extension, so a test-collection snapshot cannot carry URLs: giving one is an
error rather than a silent loss. ir_datasets' BS4 TREC parser reads a text ``t`` (any text that is
not blank) back as ``"\\n\\n" + t + "\\n\\n"``; ``&``, ``<``, ``>`` and
``\\r`` are escaped so they survive the parser.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import chain, islice
from pathlib import Path

from ir_datasets_longeval.datasets.longeval_web import (
    SUB_COLLECTIONS_TEST,
    SUB_COLLECTIONS_TRAIN,
)

from tcdb.collections.sources.records import DocumentRecord, QrelRecord, TopicRecord

__all__ = [
    "LONGEVAL_WEB_SNAPSHOTS",
    "LongEvalSnapshot",
    "LongEvalWebLayout",
    "longeval_web_layout",
    "write_longeval_web",
]

LONGEVAL_WEB_SNAPSHOTS: tuple[str, ...] = (*SUB_COLLECTIONS_TRAIN, *SUB_COLLECTIONS_TEST)
_TRAIN = frozenset(SUB_COLLECTIONS_TRAIN)
_FLUSH_EVERY = 2_000


@dataclass
class LongEvalSnapshot:
    """What one written snapshot holds. Iterables are consumed once, so generators are fine."""

    documents: Iterable[DocumentRecord] = ()
    queries: Iterable[TopicRecord] = ()
    qrels: Iterable[QrelRecord] | None = None  # None: no qrels file (a snapshot before judging)


@dataclass(frozen=True)
class LongEvalWebLayout:
    """Where the layout lives under one ir_datasets home."""

    home: Path
    french: Path = field(init=False)  # holds collection_db.db (the train URL mapping)
    train: Path = field(init=False)
    test: Path = field(init=False)

    def __post_init__(self) -> None:
        root = self.home / "longeval-web"
        french = root / "release_2025_p1" / "release_2025_p1" / "French"
        object.__setattr__(self, "french", french)
        object.__setattr__(self, "train", french / "LongEval Train Collection")
        test = root / "LongEval Test Collection" / "LongEval Test Collection"
        object.__setattr__(self, "test", test)

    def collection(self, label: str) -> Path:
        """The train or test collection folder a snapshot label belongs to."""
        if label not in LONGEVAL_WEB_SNAPSHOTS:
            known = ", ".join(LONGEVAL_WEB_SNAPSHOTS)
            raise ValueError(f"not a longeval-web snapshot: {label!r} (known: {known})")
        return self.train if label in _TRAIN else self.test

    def trec_dir(self, label: str) -> Path:
        """The folder of a snapshot's TREC files."""
        return self.collection(label) / "Trec" / f"{label}_fr"

    def queries_file(self, label: str) -> Path:
        """A snapshot's TSV queries."""
        return self.collection(label) / "queries" / f"{label}_queries.txt"

    def qrels_file(self, label: str) -> Path:
        """A snapshot's TREC qrels."""
        return self.collection(label) / "qrels" / f"{label}_fr" / "qrels_processed.txt"

    @property
    def url_db(self) -> Path:
        """The sqlite URL mapping of the train snapshots."""
        return self.french / "collection_db.db"


def longeval_web_layout(home: Path | str) -> LongEvalWebLayout:
    """The layout paths under an ir_datasets home (nothing is written)."""
    return LongEvalWebLayout(Path(home))


def write_longeval_web(home: Path | str, snapshots: Mapping[str, LongEvalSnapshot], *,
                       docs_per_file: int = 25_000) -> LongEvalWebLayout:
    """Write all 15 ``longeval-web`` snapshots under `home`, replacing any earlier layout there.

    Documents are streamed to ``part-NNNNN.trec`` files of `docs_per_file` documents each, so
    hundreds of thousands of documents take seconds and little memory (one id → URL dict for the
    mapping). Caches ir_datasets built from an earlier layout (metadata.pklz4, docstores) go with
    it, since they would otherwise shadow the new files.
    """
    if docs_per_file < 1:
        raise ValueError("docs_per_file must be positive")
    layout = LongEvalWebLayout(Path(home))
    for label in snapshots:
        layout.collection(label)  # validates the label
    for root in (layout.french.parents[1], layout.test.parent):
        if root.exists():
            shutil.rmtree(root)
    urls: dict[str, tuple[str | None, list[str]]] = {}
    for collection, labels in ((layout.train, SUB_COLLECTIONS_TRAIN),
                               (layout.test, SUB_COLLECTIONS_TEST)):
        for sub in ("Trec", "queries", "qrels"):
            (collection / sub).mkdir(parents=True, exist_ok=True)
        for index, label in enumerate(labels):
            snapshot = snapshots.get(label, LongEvalSnapshot())
            trec_dir = layout.trec_dir(label)
            trec_dir.mkdir()
            metadata = {"timestamp": label, "base": f"longeval-web/{label}",
                        "prior-datasets": list(labels[:index])}
            (trec_dir / "metadata.json").write_text(json.dumps(metadata), encoding="utf-8")
            _write_documents(label, trec_dir, snapshot.documents, docs_per_file,
                             urls if label in _TRAIN else None)
            _write_queries(layout.queries_file(label), snapshot.queries)
            if snapshot.qrels is not None:
                _write_qrels(layout.qrels_file(label), snapshot.qrels)
    _write_url_db(layout.url_db, urls)
    return layout


def _write_documents(label: str, folder: Path, documents: Iterable[DocumentRecord],
                     docs_per_file: int,
                     urls: dict[str, tuple[str | None, list[str]]] | None) -> None:
    """Stream one snapshot's documents into numbered TREC files; record train URLs in `urls`."""
    seen: set[str] = set()
    remaining = iter(documents)
    part = 0
    while True:
        batch = islice(remaining, docs_per_file)
        first = next(batch, None)
        if first is None:
            return
        with open(folder / f"part-{part:05d}.trec", "w", encoding="utf-8", newline="") as out:
            buffer: list[str] = []
            for doc in chain((first,), batch):
                _check_document(label, doc, seen, urls)
                buffer.append(f"<DOC>\n<DOCNO>doc{doc.doc_id}</DOCNO>\n<TEXT>\n"
                              f"{_escape(label, doc)}\n</TEXT>\n</DOC>\n")
                if len(buffer) >= _FLUSH_EVERY:
                    out.write("".join(buffer))
                    buffer.clear()
            out.write("".join(buffer))
        part += 1


def _check_document(label: str, doc: DocumentRecord, seen: set[str],
                    urls: dict[str, tuple[str | None, list[str]]] | None) -> None:
    """Refuse what would not read back as written; remember train URLs for the mapping."""
    _check_doc_id(label, doc.doc_id)
    if doc.doc_id in seen:
        raise ValueError(f"{label}: duplicate document id {doc.doc_id!r}")
    seen.add(doc.doc_id)
    if urls is not None:
        _remember_url(label, doc, urls)
    elif doc.url:
        raise ValueError(
            f"{label}: a LongEval test-collection snapshot has no URL mapping, "
            f"so document {doc.doc_id!r} cannot keep its URL"
        )


def _check_doc_id(label: str, doc_id: str) -> None:
    """Ids must survive the DOCNO line and the extension's ``strip("doc")`` unchanged."""
    bad = (not doc_id or doc_id != doc_id.strip() or "<" in doc_id or "\n" in doc_id
           or ("doc" + doc_id).strip("doc") != doc_id)
    if bad:
        raise ValueError(
            f"{label}: document id {doc_id!r} would not read back unchanged (it must not be empty,"
            " hold '<' or outer whitespace, or start or end with 'd', 'o' or 'c')"
        )


def _escape(label: str, doc: DocumentRecord) -> str:
    """Escape what the HTML parser would change: entities, markup and carriage returns."""
    text = doc.text
    if "\x00" in text:
        raise ValueError(f"{label}: document {doc.doc_id!r} holds a NUL character")
    if "&" in text or "<" in text or ">" in text or "\r" in text:
        text = (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                .replace("\r", "&#13;"))
    return text


def _remember_url(label: str, doc: DocumentRecord,
                  urls: dict[str, tuple[str | None, list[str]]]) -> None:
    """One URL per id across the train snapshots, as the single mapping table holds."""
    known = urls.get(doc.doc_id)
    if known is None:
        urls[doc.doc_id] = (doc.url, [label])
        return
    if known[0] != doc.url:
        raise ValueError(
            f"{label}: document {doc.doc_id!r} has URL {doc.url!r} but {known[0]!r} in "
            f"{known[1][0]}; the LongEval mapping holds one URL per document id"
        )
    known[1].append(label)


def _write_queries(path: Path, queries: Iterable[TopicRecord]) -> None:
    """The TSV the extension's TsvQueries reads: ``id<TAB>text``, one per line."""
    with open(path, "w", encoding="utf-8", newline="") as out:
        for query in queries:
            for value in (query.topic_id, query.query):
                if "\t" in value or "\n" in value or "\r" in value:
                    raise ValueError(f"query {query.topic_id!r}: tab or newline in {value!r}")
            out.write(f"{query.topic_id}\t{query.query}\n")


def _write_qrels(path: Path, qrels: Iterable[QrelRecord]) -> None:
    """TREC qrels: ``topic 0 doc grade``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as out:
        buffer: list[str] = []
        for qrel in qrels:
            buffer.append(f"{qrel.topic_id} 0 {qrel.doc_id} {int(qrel.grade)}\n")
            if len(buffer) >= 10_000:
                out.write("".join(buffer))
                buffer.clear()
        out.write("".join(buffer))


def _write_url_db(path: Path, urls: dict[str, tuple[str | None, list[str]]]) -> None:
    """The sqlite ``mapping`` table LongEvalWebMetadata reads (lists stored as JSON text)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as connection:
        connection.execute(
            "CREATE TABLE mapping (id TEXT PRIMARY KEY, url TEXT, last_updated_at TEXT, date TEXT)"
        )
        connection.executemany(
            "INSERT INTO mapping VALUES (?, ?, ?, ?)",
            ((doc_id, url, "[]", json.dumps(dates)) for doc_id, (url, dates) in urls.items()),
        )
    connection.close()
