"""Snapshots from ir_datasets, LongEval's extension included, with a fast path for LongEval docs.

Any ir_datasets id works. LongEval families (``longeval-web``, ``longeval-2023``,
``longeval-sci``, ``longeval-sci-2026``) live in `ir_datasets_longeval`, which registers a whole
family at once from ``$IR_DATASETS_HOME`` and fails if any snapshot folder is missing; tcdb
registers on demand and turns that failure into a `NotFoundError`. The registry is global and the
extension never re-registers, so when ``IR_DATASETS_HOME`` changes inside one process (tests, a
worker serving several homes) the family is registered again from the new home.

Reading a LongEval web snapshot through ir_datasets runs BeautifulSoup on every document (hours
for a real snapshot). When the files are local, `IrdsSource.documents` reads them with tcdb's TREC
reader instead and applies the extension's own rules — ids ``strip("doc")``-ed (web), mapped
through the unified id map (2023), URLs looked up in ``collection_db.db`` (web) or ``urls.txt``
(2023), loaded once into a dict — yielding the same records as ``documents(fast=False)`` (files
in sorted order, where the extension follows the directory's order).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, cast

from tcdb.collections.documents.trec import count_trec_documents, read_trec_documents
from tcdb.collections.documents.url_tables import UrlLookup, once_per_process, sqlite_urls, tsv_urls
from tcdb.collections.sources.downloads import fetched
from tcdb.collections.sources.fingerprint import file_fingerprint
from tcdb.collections.sources.records import DocumentRecord, QrelRecord, TopicRecord
from tcdb.collections.topics.formats import cleaned_topic
from tcdb.errors import InputError, NotFoundError
from tcdb.limits import (
    DOC_ID_LENGTH,
    GRADE_RANGE,
    ITERATION_LENGTH,
    TOPIC_ID_LENGTH,
    Refused,
    check_characters,
    check_identifier,
    check_range,
    clean_text_counted,
)

__all__ = ["LONGEVAL_FAMILIES", "IrdsSource", "load_dataset", "longeval_family",
           "longeval_snapshots"]

# Longest first: "longeval-sci-2026/…" must not be taken for "longeval-sci/…".
LONGEVAL_FAMILIES: tuple[str, ...] = (
    "longeval-sci-2026", "longeval-2023", "longeval-web", "longeval-sci",
)
_registered_homes: dict[str, Path] = {}


def longeval_family(dataset_id: str) -> str | None:
    """The LongEval family an id belongs to, or None for other ir_datasets ids."""
    for family in LONGEVAL_FAMILIES:
        if dataset_id == family or dataset_id.startswith(family + "/"):
            return family
    return None


def load_dataset(dataset_id: str) -> Any:
    """The ir_datasets dataset for an id, registering LongEval families from the current home."""
    import ir_datasets

    family = longeval_family(dataset_id)
    if family is not None:
        return _load_longeval(family, dataset_id)
    try:
        return ir_datasets.load(dataset_id)
    except KeyError:
        raise NotFoundError(f"unknown ir_datasets id {dataset_id!r}") from None


def _load_longeval(family: str, dataset_id: str) -> Any:
    """Load through the extension (which registers the family), once per ir_datasets home."""
    import ir_datasets
    import ir_datasets_longeval

    _refuse_unknown_snapshot(family, dataset_id)
    home = ir_datasets.util.home_path().resolve()
    if _registered_homes.get(family) != home:
        registered = ir_datasets.registry._registered  # the extension offers no un-register
        for key in [k for k in registered if k.startswith(family + "/")]:
            del registered[key]
        _registered_homes.pop(family, None)
    try:
        dataset = ir_datasets_longeval.load(dataset_id)
    except FileNotFoundError as exc:
        raise NotFoundError(
            f"cannot register {family} from {home / family}: {exc}. The extension needs every "
            "snapshot folder of the family in place (download it, or set IR_DATASETS_HOME)"
        ) from None
    except ValueError:  # the extension's "could not find a dataset with the id"
        raise NotFoundError(f"unknown ir_datasets id {dataset_id!r}") from None
    except OSError as exc:  # a download the extension tried and could not make
        raise NotFoundError(f"cannot register {family} from {home / family}: {exc}") from None
    _registered_homes[family] = home
    return dataset


def longeval_snapshots(family: str) -> tuple[str, ...]:
    """The snapshot labels (an id's part after the family) a LongEval family declares, read from
    the extension where it lists them; "*" and the campaign names group several snapshots."""
    if family == "longeval-web":
        from ir_datasets_longeval.datasets import longeval_web as web

        return (*web.SUB_COLLECTIONS_TRAIN, *web.SUB_COLLECTIONS_TEST, "*", "clef-2025-test")
    if family == "longeval-2023":
        from ir_datasets_longeval.datasets import longeval_2023 as old

        return (*old.SUB_COLLECTIONS_TRAIN, *old.SUB_COLLECTIONS_TEST, "*", "clef-2023",
                "clef-2023-train")
    if family == "longeval-sci":
        return ("2024-11", "2025-01", "*", "clef-2025-test", "spot-check")
    return ("snapshot-1", "snapshot-2", "snapshot-3", "*", "clef-2026", "spot-check")


def _refuse_unknown_snapshot(family: str, dataset_id: str) -> None:
    """An id naming no snapshot of its family is refused before registering: the extension
    registers a family by downloading all of it, which an unknown id must never start."""
    label = dataset_id[len(family) + 1:].split("/")[0]
    known = longeval_snapshots(family)
    if label not in known:
        what = f"{family} has no snapshot {label!r}" if label else \
            f"{family} is a family of snapshots, not one of them"
        raise NotFoundError(f"unknown ir_datasets id {dataset_id!r}: {what} (known: "
                            f"{', '.join(known)})")


URL_CHUNK = 2_000


@dataclass(frozen=True)
class _FastPlan:
    """How to read a LongEval snapshot's TREC files directly."""

    root: Path  # the snapshot's folder of TREC files
    files: list[Path]
    map_id: Callable[[str], str | None]
    urls: Callable[[], UrlLookup] | None  # opens the URL mapping, keyed by the raw id kind
    url_key_is_mapped: bool  # web looks URLs up by the stripped id, 2023 by the original one
    url_file: Path | None


class IrdsSource:
    """A snapshot given by an ir_datasets id, e.g. ``longeval-web/2022-06`` or ``vaswani``."""

    kind = "irds"

    def __init__(self, dataset_id: str) -> None:
        self.dataset_id = dataset_id
        self.description = f"irds:{dataset_id}"
        self.dataset = load_dataset(dataset_id)

    def __repr__(self) -> str:
        return f"IrdsSource({self.dataset_id!r})"

    def fingerprint(self) -> str:
        """The id plus name, size and mtime of the local files it resolves to (when it knows them).

        For LongEval that is the snapshot's TREC files, its URL mapping, queries and qrels; for
        other datasets the docs/queries/qrels paths when local (a directory counts by itself, not
        its content, to stay cheap: ir_datasets checks downloads by hash anyway).
        """
        groups: list[tuple[str, Path | str | None]] = []
        plan = self._fast_plan()
        if plan is not None:
            groups += [(f"docs/{f.name}", f) for f in plan.files]
            groups.append(("urls", plan.url_file))
        else:
            groups.append(("docs", self._local_path("docs_path")))
        groups.append(("queries", self._local_path("queries_path")))
        groups.append(("qrels", self._local_path("qrels_path")))
        return file_fingerprint(f"{self.kind}:{self.dataset_id}", groups)

    def _local_path(self, method: str) -> Path | str | None:
        """A handler's local file, or for a directory a token of the folder's own size and mtime."""
        getter = getattr(self.dataset, method, None)
        if getter is None:
            return None
        try:
            try:
                value = getter(force=False)
            except TypeError:
                value = getter()
        except Exception:  # not downloaded, or a handler without a path: nothing to stat
            return None
        path = Path(value) if isinstance(value, str | Path) else None
        if path is None or not path.exists():
            return None
        if path.is_file():
            return path
        stat = path.stat()
        return f"dir:{path.name}:{stat.st_size}:{stat.st_mtime_ns}"

    def documents(self, *, fast: bool = True) -> Iterator[DocumentRecord]:
        """The documents; local LongEval web/2023 files are read directly when `fast`."""
        plan = self._fast_plan() if fast else None
        if plan is not None:
            return self._fast_documents(plan)
        return self._irds_documents()

    def document_parts(self) -> list[Callable[[], Iterator[DocumentRecord]]] | None:
        """The documents of local LongEval files as one part per file, in `documents()`'s order
        (their concatenation is `documents()`), for readers in parallel over the files; None
        when they are one stream (ir_datasets' own iteration, or a single file). The URL mapping
        is opened by the first part a process reads, so parts may run in processes of their
        own."""
        plan = self._fast_plan()
        if plan is None or len(plan.files) < 2:
            return None
        urls = once_per_process(plan.urls) if plan.urls is not None else None
        return [partial(self._fast_documents, replace(plan, files=[file], urls=urls))
                for file in plan.files]

    def _irds_documents(self) -> Iterator[DocumentRecord]:
        """ir_datasets' records held to the limits every file reader applies (ids one word
        within their column, text without NUL: `tcdb.limits`), refused naming the dataset
        and the record's position."""
        for number, doc in enumerate(fetched(self.dataset_id, self.dataset.docs_iter), start=1):
            url = getattr(doc, "url", None)
            # A dataset whose documents carry who wrote them (and the original rewritten).
            source, twin = getattr(doc, "source", None), getattr(doc, "twin_of", None)
            text, removed = clean_text_counted(_default_text(doc))
            try:  # not `self._record`: a context manager per document costs ~1 µs
                record = DocumentRecord(
                    check_identifier(str(doc.doc_id), "document id", DOC_ID_LENGTH),
                    text,
                    check_characters(url, "URL") if isinstance(url, str) and url else None,
                    source if isinstance(source, str) and source else None,
                    (check_identifier(str(twin), "twin_of", DOC_ID_LENGTH)
                     if twin not in (None, "") else None),
                    removed)
            except Refused as exc:
                raise InputError(self.dataset_id, None, f"document {number}: {exc}") from None
            yield record

    @contextmanager
    def _record(self, number: int, kind: str) -> Iterator[None]:
        """A value beyond `tcdb.limits` as bad input: the dataset and the record's number."""
        try:
            yield
        except Refused as exc:
            raise InputError(self.dataset_id, None, f"{kind} {number}: {exc}") from None

    def _fast_documents(self, plan: _FastPlan) -> Iterator[DocumentRecord]:
        """The TREC files read directly, URLs looked up a chunk of documents at a time."""
        from itertools import islice

        lookup = plan.urls() if plan.urls is not None else None
        stream = read_trec_documents(plan.files)
        map_id = plan.map_id
        # Per chunk, in C-speed calls where it can be (a document costs ~2 µs here in all).
        while chunk := list(islice(stream, URL_CHUNK)):
            raw_ids = [doc.doc_id for doc in chunk]
            mapped = list(map(map_id, raw_ids))
            if None in mapped:
                raw = raw_ids[mapped.index(None)]
                raise InputError(self.dataset_id, None, f"document {raw!r} is "
                                 "missing from the extension's id map")
            ids = cast(list[str], mapped)  # no None: checked just above
            keys = ids if plan.url_key_is_mapped else raw_ids
            if lookup is None:
                yield from map(DocumentRecord, ids, [doc.text for doc in chunk])
                continue
            urls = lookup(keys)
            if not all(map(urls.__contains__, keys)):
                missing = next(key for key in keys if key not in urls)
                raise InputError(plan.url_file or self.dataset_id, None,
                                 f"document {missing!r} of "
                                 f"{self.dataset_id} has no URL mapping")
            yield from map(DocumentRecord, ids, [doc.text for doc in chunk],
                           [urls[key] or None for key in keys])

    def _fast_plan(self) -> _FastPlan | None:
        """The direct-read plan for LongEval web/2023 docs whose files are local, else None."""
        try:
            handler = self.dataset.docs_handler()
        except Exception:
            return None
        from ir_datasets_longeval.datasets import longeval_2023, longeval_web

        if type(handler) is longeval_web.LongEvalDocs:
            root = Path(handler._dlc.path(force=False))
            meta = handler._meta
            db = Path(meta._dlc) / "collection_db.db" if meta is not None else None
            return _FastPlan(
                root=root,
                files=_trec_files(root),
                map_id=lambda raw: raw.strip("doc"),
                urls=(lambda: sqlite_urls(db)) if db is not None else None,
                url_key_is_mapped=True,
                url_file=db,
            )
        if type(handler) is longeval_2023.LongEvalDocs:
            root = Path(handler._dlc.path(force=False))
            meta = handler._meta
            urls_txt = Path(meta._dlc) if meta is not None else None
            id_map = handler.doc_id_map
            return _FastPlan(
                root=root,
                files=_trec_files(root),
                map_id=(lambda raw: id_map.get(raw)) if id_map else (lambda raw: raw),
                urls=(lambda: tsv_urls(urls_txt).get_many) if urls_txt is not None else None,
                url_key_is_mapped=False,
                url_file=urls_txt,
            )
        return None

    def empty_folder(self) -> Path | None:
        """The local LongEval folder of this snapshot when it exists but holds no documents yet
        (a snapshot declared before its data arrived), else None. Lists files, reads none."""
        plan = self._fast_plan()
        return plan.root if plan is not None and not plan.files else None

    def topics(self) -> Iterator[TopicRecord]:
        """The queries, with TREC description and narrative when the dataset has them."""
        if not self.dataset.has_queries():
            return iter(())
        return self._topics()

    def _topics(self) -> Iterator[TopicRecord]:
        queries = fetched(self.dataset_id, self.dataset.queries_iter)
        for number, query in enumerate(queries, start=1):
            values = query._asdict() if hasattr(query, "_asdict") else {}
            fields = {k: v for k, v in values.items() if k != "query_id" and isinstance(v, str)}
            description, narrative = (_str_or_none(values.get(k))
                                      for k in ("description", "narrative"))
            with self._record(number, "query"):
                yield cleaned_topic(TopicRecord(
                    topic_id=check_identifier(str(query.query_id), "topic id",
                                              TOPIC_ID_LENGTH),
                    query=_default_text(query), description=description, narrative=narrative,
                    fields=fields))

    def qrels(self) -> Iterator[QrelRecord] | None:
        """The judgments, or None when the dataset has none (e.g. LongEval test snapshots)."""
        if not self.dataset.has_qrels():
            return None
        return self._qrels()

    def _qrels(self) -> Iterator[QrelRecord]:
        for number, q in enumerate(fetched(self.dataset_id, self.dataset.qrels_iter), start=1):
            iteration = _iteration(q)
            with self._record(number, "judgment"):
                yield QrelRecord(
                    topic_id=check_identifier(str(q.query_id), "topic id", TOPIC_ID_LENGTH),
                    doc_id=check_identifier(str(q.doc_id), "document id", DOC_ID_LENGTH),
                    grade=check_range(int(q.relevance), "grade", GRADE_RANGE),
                    iteration=(None if iteration is None else
                               check_identifier(iteration, "iteration", ITERATION_LENGTH)))

    def documents_count_hint(self) -> int | None:
        """For local LongEval files (read directly), their ``</DOC>`` lines counted without
        parsing, since ir_datasets knows no count for them; else ir_datasets' count when it has
        one cheaply (metadata or a built docstore)."""
        plan = self._fast_plan()
        if plan is not None:
            return count_trec_documents(plan.files)
        try:
            count = self.dataset.docs_count()
        except Exception:
            return None
        return count if isinstance(count, int) else None


def _default_text(item: Any) -> str:
    """ir_datasets' own idea of an item's text (title + body, etc.), else its `text` field."""
    if hasattr(item, "default_text"):
        return str(item.default_text())
    return str(getattr(item, "text", ""))


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _trec_files(root: Path) -> list[Path]:
    """The document files of a LongEval snapshot folder: all but metadata and ir_datasets caches."""
    if not root.is_dir():
        raise NotFoundError(f"LongEval documents folder does not exist: {root}")
    return sorted(
        p for p in root.rglob("*")
        if p.is_file()
        and p.name != "metadata.json"
        and not any(".pklz4" in part or part.startswith(".")
                    for part in p.relative_to(root).parts)
    )


def _iteration(qrel: Any) -> str | None:
    """A TREC qrel's iteration column when the dataset keeps it (`TrecQrel.iteration`)."""
    value = getattr(qrel, "iteration", None)
    return None if value is None else str(value)
