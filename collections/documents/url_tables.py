"""The URL lookup tables of LongEval snapshots: id → URL from web's ``collection_db.db`` or 2023's
``urls.txt``.

Separate from `ir_datasets_source` because they are a storage question of their own (SQLite
looked up per chunk, a TSV held in memory, opened once per reading process), which the direct
read of a snapshot's TREC files only calls through `UrlLookup`.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

from tcdb.errors import InputError, NotFoundError

__all__ = ["UrlLookup", "UrlTable", "once_per_process", "sqlite_urls", "tsv_urls"]

UrlLookup = Callable[[list[str]], dict[str, str]]  # ids → the URLs of those that have one


def once_per_process(open_urls: Callable[[], UrlLookup]) -> Callable[[], UrlLookup]:
    """The URL mapping opened once in each process that reads parts, not once per part (2023's
    urls.txt is read whole)."""
    opened: dict[int, UrlLookup] = {}

    def get() -> UrlLookup:
        pid = os.getpid()
        if pid not in opened:
            opened[pid] = open_urls()
        return opened[pid]

    return get


def sqlite_urls(db: Path) -> UrlLookup:
    """id → URL from LongEval web's collection_db.db, looked up by its primary key per chunk.

    The mapping covers every snapshot of the collection (millions of rows): reading it whole
    would make an ingest's memory grow with the collection, not with a batch.
    """
    if not db.is_file():
        raise NotFoundError(f"LongEval URL mapping does not exist: {db}")
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True, check_same_thread=False)

    def lookup(ids: list[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        for start in range(0, len(ids), 500):  # under SQLite's bound-parameter limit
            chunk = ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            found.update((str(i), u) for i, u in connection.execute(
                f"SELECT id, url FROM mapping WHERE id IN ({marks})", chunk))
        return found

    return lookup


class UrlTable(dict[str, str]):
    """A URL mapping held in memory (LongEval 2023's urls.txt, one snapshot's documents)."""

    def get_many(self, ids: list[str]) -> dict[str, str]:
        return {i: self[i] for i in ids if i in self}


def tsv_urls(path: Path) -> UrlTable:
    """id → URL from LongEval 2023's urls.txt (``id<TAB>url``), parsed as the extension does."""
    urls = UrlTable()
    from tcdb.collections.files.opening import open_input

    with open_input(path) as lines:  # a directory, compressed, an endless line: files' rule
        for number, raw in enumerate(lines, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise InputError(path, number, "not UTF-8 text") from None
            parts = line.strip().split("\t")
            if len(parts) != 2:
                raise InputError(path, number, "expected 'id<TAB>url'")
            urls[parts[0]] = parts[1]
    return urls
