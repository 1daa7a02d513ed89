"""JSONL document files, BEIR's ``corpus.jsonl`` among them, plain or gzip.

One JSON object per line. The id is the first of ``_id`` (BEIR), ``doc_id`` or ``id``; the text is
``text`` (or ``contents``, Pyserini's name). BEIR documents also carry a ``title``: BEIR's own
evaluation code and the dense retrievers built on it encode ``title + " " + text``, but in tcdb the
text is stored and shown, so the title is kept as its own first line: ``title + "\\n" + text``
(just ``text`` when the title is missing or empty). ``url`` is kept; ``source`` (who wrote the
document: ``human``, ``llm``, …) and ``twin_of`` (the id of the original an LLM document was
rewritten from, Cocktail's pairs) are kept for source-bias studies. Other keys (BEIR's
``metadata``) are ignored. Blank lines are skipped; anything else that is not such an object is
an error naming the line.

Ids (``_id``, ``twin_of``) are one word of at most 500 characters without control characters
(`tcdb.limits`), ``source`` a short label; the text and title are free text, their control
characters that are not whitespace (NUL among them) removed at read (JSON gives them only as
escapes, so lines without one are not looked at).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, overload

import orjson

from tcdb.collections.files.bad_lines import BadLines, set_aside
from tcdb.collections.files.compression import count_markers, open_maybe_gzip
from tcdb.collections.sources.records import DocumentRecord, Rejected, is_json_id
from tcdb.errors import InputError
from tcdb.limits import (
    DOC_ID_LENGTH,
    LABEL_LENGTH,
    Refused,
    check_characters,
    check_identifier,
    check_length,
    clean_text_counted,
)

__all__ = ["count_jsonl_documents", "is_jsonl_path", "read_jsonl_documents"]

_ID_KEYS = ("_id", "doc_id", "id")
_TEXT_KEYS = ("text", "contents")


def is_jsonl_path(path: Path) -> bool:
    """Whether a path names a JSONL file (``.jsonl``, ``.jsonl.gz``, ``.ndjson``…)."""
    name = path.name.lower().removesuffix(".gz")
    return name.endswith((".jsonl", ".ndjson"))


def count_jsonl_documents(files: Iterable[Path]) -> int | None:
    """The documents of JSONL files, counted as lines without parsing (for a progress bar; a blank
    line counts too, though reading skips it); None when too costly (large gzip files)."""
    return count_markers(files, b"\n", lines=True)


@overload
def read_jsonl_documents(path: Path | str, bad: None = None) -> Iterator[DocumentRecord]: ...
@overload
def read_jsonl_documents(path: Path | str,
                         bad: BadLines) -> Iterator[DocumentRecord | Rejected]: ...
def read_jsonl_documents(path: Path | str, bad: BadLines | None = None,
                         ) -> Iterator[DocumentRecord | Rejected]:
    """Yield the documents of one JSONL file in file order; a bad line raises `InputError`,
    or under `bad` that keeps going (`--on-bad-lines warn|skip`) is yielded as a `Rejected`."""
    path = Path(path)
    number = 0  # a missing path, a directory…: refused by open_maybe_gzip (files.open_input)
    with open_maybe_gzip(path) as stream:
        lines = iter(stream)
        while True:
            try:
                raw = next(lines)
            except StopIteration:
                return
            except (OSError, EOFError) as exc:  # a corrupt or truncated gzip stream
                raise InputError(path, number + 1, f"cannot read: {exc}") from exc
            number += 1
            if raw.strip():
                try:
                    yield _record(path, number, raw)
                except InputError as exc:
                    yield set_aside(exc, bad)


# JSON escapes that decode to a C0 control character (a raw one is malformed JSON).
_CONTROL_ESCAPES = (b"\\u00", b"\\b", b"\\f")


def _record(path: Path, line: int, raw: bytes) -> DocumentRecord:
    """One line to one record, with the reason when it cannot be one."""
    try:
        record = _parsed(path, line, raw)
        check_identifier(record.doc_id, "document id", DOC_ID_LENGTH)
        if record.twin_of is not None:
            check_identifier(record.twin_of, "twin_of", DOC_ID_LENGTH)
        if record.url is not None:
            check_characters(record.url, "url")
        if record.source is not None:
            check_length(record.source, "source", LABEL_LENGTH)
    except Refused as exc:
        raise InputError(path, line, str(exc)) from None
    # A line without a backslash has no escape: one memchr-speed look instead of three
    # searches for a short needle (~10 µs for a 5 KB line).
    if b"\\" in raw and any(escape in raw for escape in _CONTROL_ESCAPES):
        text, removed = clean_text_counted(record.text)
        return DocumentRecord(record.doc_id, text, record.url, record.source, record.twin_of,
                              removed)
    return record


def _parsed(path: Path, line: int, raw: bytes) -> DocumentRecord:
    """The record a line states, before the limits are checked."""
    try:
        obj: Any = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InputError(path, line, f"malformed JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise InputError(path, line, f"expected a JSON object, got {type(obj).__name__}")
    doc_id = _first(obj, _ID_KEYS)
    if not is_json_id(doc_id):
        raise InputError(path, line, "document without an id (_id, doc_id or id)")
    doc_id = str(doc_id)
    if not doc_id.strip():
        raise InputError(path, line, "document with an empty id")
    text = _first(obj, _TEXT_KEYS)
    if not isinstance(text, str):
        raise InputError(path, line, f"document {doc_id!r} without a text (text or contents)")
    title = obj.get("title")
    if title is not None and not isinstance(title, str):
        raise InputError(path, line, f"document {doc_id!r}: title is not a string")
    if title:
        text = f"{title}\n{text}"
    url = obj.get("url")
    if url is not None and not isinstance(url, str):
        raise InputError(path, line, f"document {doc_id!r}: url is not a string")
    source = obj.get("source")
    if source is not None and not isinstance(source, str):
        raise InputError(path, line, f"document {doc_id!r}: source is not a string")
    twin = obj.get("twin_of")
    if twin is not None and not is_json_id(twin):
        raise InputError(path, line, f"document {doc_id!r}: twin_of is not a document id")
    return DocumentRecord(doc_id=doc_id, text=text, url=url or None,
                          source=source.strip() or None if source else None,
                          twin_of=str(twin).strip() or None if twin is not None else None)


def _first(obj: dict[str, Any], keys: tuple[str, ...]) -> Any:
    """The value of the first key present (a present null counts as missing)."""
    for key in keys:
        value = obj.get(key)
        if value is not None:
            return value
    return None
