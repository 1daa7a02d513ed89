"""A fast streaming reader of TREC SGML document files that agrees with ir_datasets' `TrecDocs`.

Why not just `ir_datasets.formats.TrecDocs`: its default parser runs BeautifulSoup over every
document, which makes a LongEval snapshot (millions of documents) take hours. This reader applies
the very same line-based selection rules as `TrecDocs._parser_bs` (the default, ``parser='BS4'``)
and then turns the selected markup into text with a few string operations whenever the markup is
plain (no entities, no HTML, only the TREC content tags); only documents with real markup go
through BeautifulSoup, so the text is the same, byte for byte, as `TrecDocs` gives.
This module splits files into documents and decodes them; the per-document rules (which lines
are markup, and their text) are in `trec_markup`.

What `TrecDocs` does (and so what this reader does):

* lines are split as `codecs` readers split them (`str.splitlines`: ``\\n``, ``\\r``, ``\\r\\n``,
  ``\\x0b``, ``\\x0c``, ``\\x1c``-``\\x1e``, ``\\x85``, ``\\u2028``, ``\\u2029``);
* a line starting with ``<DOCNO>`` gives the id: the line without ``<DOCNO>`` and ``</DOCNO>\\n``,
  stripped;
* a line equal to ``</DOC>\\n`` ends a document;
* a line starting with a content tag (``<TEXT>``, ``<HEADLINE>``, ``<TITLE>``, ``<HL>``, ``<HEAD>``,
  ``<TTL>``, ``<DD>``, ``<DATE>``, ``<LP>``, ``<LEADPARA>``) opens a content region and a line
  starting with its closing tag closes it (a counter that, like the original, is kept across the
  documents of one file); the lines of open regions, tag lines included, are the markup;
* the text is ``BeautifulSoup('<OUTER>\\n' + markup + '\\n</OUTER>', 'lxml').get_text()``: tags
  dropped, entities decoded, whitespace-only strings collapsed to one ``\\n`` (or one space).

Where tcdb deliberately differs, because it never silently changes or drops data: undecodable
bytes raise `InputError` (TrecDocs replaces them with U+FFFD), a document without ``<DOCNO>`` raises
`InputError` (TrecDocs yields id ``None``), and a file that ends inside a document (no final
``</DOC>`` line) raises `InputError` (TrecDocs drops that document without a word).

As for every source (`tcdb.limits`): a document id is one word of at most 500 characters
without control characters (else `InputError` naming its <DOCNO> line), and the text's control
characters that are not whitespace are removed after the markup is read (a NUL cannot be
stored on PostgreSQL; lxml has already made U+FFFD of it, as in TrecDocs' text). Both changes are
counted on the record (`DocumentRecord.removed`) and said by the ingest.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import overload

import numpy as np

from tcdb.collections.documents.trec_markup import (
    FileState,
    collapse,
    docno,
    markup_text,
    select_fast,
    select_lines,
)
from tcdb.collections.files.bad_lines import BadLines, set_aside
from tcdb.collections.files.compression import count_markers, open_maybe_gzip
from tcdb.collections.sources.records import DocumentRecord, Rejected
from tcdb.errors import InputError
from tcdb.limits import (
    DOC_ID_LENGTH,
    Refused,
    check_identifier,
    clean_text_counted,
    needs_cleaning,
)

__all__ = ["count_trec_documents", "iter_document_files", "read_trec_documents"]

# Line separators of str.splitlines other than "\n": a document holding one of them takes the
# exact (slower) line path, since a tag may then start a "line" that is not after a "\n".
_EXOTIC_SEPARATORS: tuple[str, ...] = tuple("\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_SEPARATORS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_BLOCK_SIZE = 8 << 20


@overload
def read_trec_documents(paths: Path | str | Iterable[Path | str], bad: None = None,
                        ) -> Iterator[DocumentRecord]: ...
@overload
def read_trec_documents(paths: Path | str | Iterable[Path | str], bad: BadLines,
                        ) -> Iterator[DocumentRecord | Rejected]: ...
def read_trec_documents(paths: Path | str | Iterable[Path | str], bad: BadLines | None = None,
                        ) -> Iterator[DocumentRecord | Rejected]:
    """Yield the documents of TREC SGML files (plain or gzip), in file order then file position.

    `paths` is one file, one directory (all files below it, recursively, sorted by path; hidden
    files skipped) or several of either. Gzip is recognised by its magic bytes, not the name,
    because real collections ship plain files named ``.gz`` (LongEval 2023-02). Under `bad`
    (`--on-bad-lines`) that keeps going, a document without <DOCNO> or with a bad id, or a file's
    unclosed last document, is yielded as a `Rejected` at its line, and reading goes on.
    """
    for file in iter_document_files(paths):
        yield from _read_file(file, bad)


def count_trec_documents(paths: Path | str | Iterable[Path | str]) -> int | None:
    """The documents a read would yield, counted by their ``</DOC>`` lines without parsing (for
    a progress bar); None when that would cost too much (large gzip files)."""
    return count_markers(iter_document_files(paths), b"</DOC>\n")


def iter_document_files(paths: Path | str | Iterable[Path | str]) -> Iterator[Path]:
    """Expand files and directories into the sorted list of files to read; a missing path fails."""
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    for item in items:
        path = Path(item)
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file() and not _hidden(p, path))
        elif path.exists():
            yield path  # a file or a pipe; anything else is refused on opening
        else:
            raise InputError(path, None, "no such file or directory")


def _hidden(path: Path, root: Path) -> bool:
    """Whether a file below `root` is hidden (a dot file or inside a dot folder)."""
    return any(part.startswith(".") for part in path.relative_to(root).parts)


def _pieces(path: Path) -> Iterator[tuple[str, int]]:
    """The file's text in large decoded pieces, each ending after a "\\n" (or at the file's end),
    each with what its raw bytes hold (`_PLAIN`, `_CLEAN` or `_DIRTY`, `_kind_of`).

    Bytes are decoded straight from the read buffer; only the few bytes of a line cut by a read
    are joined to the start of the next read, so no block is copied whole. Lines are not counted
    here: only errors need line numbers, and they find them by reading the file again.
    """
    offset = 0  # bytes of the file before `rest`
    rest = b""
    rest_kind = _PLAIN
    with open_maybe_gzip(path) as stream:
        while True:
            try:
                chunk = stream.read(_BLOCK_SIZE)
            except (OSError, EOFError) as exc:
                raise InputError(path, None, f"cannot read: {exc}") from exc
            if not chunk:
                break
            kind = _kind_of(chunk)
            end = chunk.rfind(b"\n") + 1
            if end == 0:
                rest += chunk
                rest_kind = max(rest_kind, kind)
                if len(rest) > stream.max_line:  # a file without newlines is not read whole
                    raise InputError(path, _line_of_byte(path, offset), "line longer than "
                                     f"{stream.max_line:,} bytes (TCDB_MAX_LINE_BYTES)")
                continue
            start = 0
            if rest:
                start = chunk.find(b"\n") + 1
                yield _decode(path, rest + chunk[:start], offset), max(rest_kind, kind)
                offset += len(rest) + start
            if end > start:
                yield _decode(path, memoryview(chunk)[start:end], offset), kind
                offset += end - start
            rest, rest_kind = chunk[end:], kind
    if rest:
        yield _decode(path, rest, offset), rest_kind


# What a block of a file's raw bytes holds, worst last (a piece cut from two blocks takes the
# worse): only printable ASCII and "\n"; no control character free text loses; some.
_PLAIN, _CLEAN, _DIRTY = 0, 1, 2


def _kind_of(chunk: bytes) -> int:
    """`_PLAIN` when the block is ASCII whose only control character is "\\n" — then none of its
    documents holds a line separator but "\\n", a NUL, a CR or a control character
    `clean_text` drops, and the reader skips looking for them document by document —, else
    `_CLEAN` or `_DIRTY` (`needs_cleaning`). Three C-speed passes over the raw bytes
    (~0.1 ns a byte: ASCII, newlines to spaces, the smallest byte), not a decode and encode."""
    if chunk.isascii() and np.frombuffer(chunk.replace(b"\n", b" "), np.uint8).min() >= 32:
        return _PLAIN
    return _DIRTY if needs_cleaning(chunk) else _CLEAN


def _decode(path: Path, data: bytes | memoryview, offset: int) -> str:
    """Decode UTF-8 strictly; bad bytes are an error naming the line they are on."""
    try:
        return str(data, "utf-8")
    except UnicodeDecodeError as exc:
        bad = bytes(data[exc.start : exc.end]).hex()
        line = _line_of_byte(path, offset + exc.start)
        raise InputError(path, line, f"bytes 0x{bad} are not valid UTF-8") from exc


def _line_of_byte(path: Path, offset: int) -> int | None:
    """The 1-based line holding byte `offset` of the file (read again; errors only). None for
    a pipe, which cannot be read again."""
    if not path.is_file():
        return None
    line = 1
    with open_maybe_gzip(path) as stream:
        while offset > 0 and (chunk := stream.read(min(_BLOCK_SIZE, offset))):
            line += chunk.count(b"\n")
            offset -= len(chunk)
    return line


def _line_of_char(path: Path, offset: int) -> int | None:
    """The 1-based line holding character `offset` of the decoded file (errors only). None
    for a pipe, which cannot be read again."""
    if not path.is_file():
        return None
    line = 1
    for piece, _ in _pieces(path):
        if offset <= len(piece):
            return line + piece.count("\n", 0, offset)
        line += piece.count("\n")
        offset -= len(piece)
    return line


def _doc_ends(text: str, start: int) -> Iterator[int]:
    """Offsets of the lines equal to "</DOC>\\n" (what ends a document in TrecDocs)."""
    pos = text.find("</DOC>\n", start)
    while pos != -1:
        if pos == 0 or text[pos - 1] in _SEPARATORS:
            yield pos
        pos = text.find("</DOC>\n", pos + 1)


class _MissingDocno(Exception):
    """A document without <DOCNO>, at `offset` characters into it (its <DOC> line, if any)."""

    def __init__(self, offset: int) -> None:
        super().__init__(offset)
        self.offset = offset


def _read_file(path: Path, bad: BadLines | None = None) -> Iterator[DocumentRecord | Rejected]:
    """Split one file into documents (TrecDocs' rules) and yield their records."""
    state = FileState()
    carry = ""  # the start of a document that goes on in the next piece
    carry_kind = _PLAIN  # what the pieces it came from hold (`_kind_of`)
    before = 0  # characters of the file before the current piece
    for piece, kind in _pieces(path):
        pos = 0
        for end in _doc_ends(piece, 0):
            if carry:
                doc, doc_kind = carry + piece[pos:end], max(carry_kind, kind)
            else:
                doc, doc_kind = piece[pos:end], kind
            try:
                record = _document(doc, state, doc_kind == _PLAIN)
                check_identifier(record.doc_id, "document id", DOC_ID_LENGTH)
            except _MissingDocno as exc:
                where = _line_of_char(path, before + pos - len(carry) + exc.offset)
                yield set_aside(InputError(path, where, "document without <DOCNO>"), bad)
                carry, carry_kind, pos = "", _PLAIN, end + 7
                continue
            except Refused as exc:
                offset = before + pos - len(carry) + max(doc.find("<DOCNO>"), 0)
                yield set_aside(InputError(path, _line_of_char(path, offset), str(exc)),
                                bad)
                carry, carry_kind, pos = "", _PLAIN, end + 7
                continue
            if doc_kind == _DIRTY:
                text, removed = clean_text_counted(record.text)
                record = DocumentRecord(doc_id=record.doc_id, text=text,
                                        removed=record.removed + removed)
            carry, carry_kind = "", _PLAIN
            yield record
            pos = end + 7
        if pos < len(piece):
            carry += piece[pos:]
            carry_kind = max(carry_kind, kind)
        before += len(piece)
    if carry and ("<DOC>" in carry or "<DOCNO>" in carry):
        where = _line_of_char(path, before - len(carry) + max(carry.find("<DOC"), 0))
        yield set_aside(InputError(path, where, "document not closed by a </DOC> line "
                                   "(truncated file?)"), bad)


def _document(doc: str, state: FileState, plain: bool = False) -> DocumentRecord:
    """One document: the lines between two "</DOC>" lines, the closing line excluded. `plain`:
    its bytes are ASCII with no control character but "\\n" (`_kind_of`), so no other line
    separator needs looking for."""
    if not plain and any(char in doc for char in _EXOTIC_SEPARATORS):
        doc_id, markup = select_lines(doc, state)
    else:
        record = _canonical(doc, state)
        if record is not None:
            return record
        doc_id, markup = select_fast(doc, state)
    if doc_id is None:
        raise _MissingDocno(max(doc.find("<DOC>"), 0))
    # lxml writes U+FFFD for each NUL of the markup, as in TrecDocs' text: a change, counted.
    return DocumentRecord(doc_id=doc_id, text=markup_text(markup), removed=markup.count("\x00"))


def _canonical(doc: str, state: FileState) -> DocumentRecord | None:
    """The common shape, ``<DOC>/<DOCNO>/<TEXT>`` lines around plain text, in one go (or None).

    Its markup is ``<TEXT>\\n`` + body + ``</TEXT>\\n``, whose text is "\\n" + the collapsed
    "\\n" + body + "\\n"; the caller has ruled out separators other than "\\n".
    """
    if state.in_tag or not doc.startswith("<DOC>\n<DOCNO>"):
        return None
    eol = doc.find("\n", 13)
    if eol == -1 or not doc.startswith("<TEXT>\n", eol + 1) or not doc.endswith("\n</TEXT>\n"):
        return None
    inner = doc[eol + 7 : len(doc) - 8]  # "\n" + body, sliced once
    for char in ("<", "&", "\x00"):
        if char in inner:
            return None
    return DocumentRecord(docno(doc[6 : eol + 1]), f"\n{collapse(inner)}\n")  # positional:
    # a frozen dataclass's keywords cost ~0.3 µs a document more
