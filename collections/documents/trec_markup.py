"""How TrecDocs turns one document's lines into text: which lines are markup (the content-tag
regions, the <DOCNO> line giving the id) and the text BeautifulSoup(lxml) gets from that markup,
computed with a few string operations when the markup is plain.

Separate from `trec_documents`, which splits files into documents and decodes them: these are
the per-document rules that must agree byte for byte with ir_datasets' `TrecDocs` (its module
docstring lists them), tested on their own against BeautifulSoup. The reader imports them; they
import nothing of the reader.
"""

from __future__ import annotations

import re

__all__ = [
    "CONTENT_TAGS", "FileState", "collapse", "docno", "markup_text", "select_fast",
    "select_lines",
]

# The content tags of ir_datasets' TrecDocs (taken from Anserini's TrecCollection).
CONTENT_TAGS: tuple[str, ...] = (
    "TEXT", "HEADLINE", "TITLE", "HL", "HEAD", "TTL", "DD", "DATE", "LP", "LEADPARA",
)

_OPEN_TAG = re.compile("<(?:" + "|".join(CONTENT_TAGS) + ")>")
_CLOSE_TAG = re.compile("</(?:" + "|".join(CONTENT_TAGS) + ")>")
# Tags lxml treats as unknown inline elements: markup made of only these (and plain text) gets
# its text without a parser. TITLE, HEAD and DD are real HTML elements that lxml moves around.
_PLAIN_TAG = re.compile(r"<(/?)(TEXT|HEADLINE|HL|TTL|DATE|LP|LEADPARA|DOC|DOCNO)>")
# What libxml2 or BeautifulSoup rewrites in text (found by trying every code point): NUL, CR,
# entities and markup. Any of them sends the document through BeautifulSoup. (Plain `in` tests:
# a regex character class is ten times slower here.)
_NOT_PLAIN: tuple[str, ...] = ("&", "\r", "\x00")
_ASCII_SPACES = " \n\t\x0c\r"  # BeautifulSoup's whitespace, for collapsing blank strings


class FileState:
    """What TrecDocs keeps across the documents of one file: the content-region counter."""

    __slots__ = ("in_tag",)

    def __init__(self) -> None:
        self.in_tag = 0


def markup_text(markup: str) -> str:
    """The text BeautifulSoup(lxml) gets from TrecDocs' wrapped markup, computed fast when plain."""
    text = _plain_text(markup)
    if text is None:
        text = _soup_text(f"<OUTER>\n{markup}\n</OUTER>")
    return text


def _plain_text(markup: str) -> str | None:
    """Text of markup made only of plain text and unknown tags, or None when a parser is needed.

    TrecDocs wraps the markup in "<OUTER>\n" … "\n</OUTER>"; lxml splits the text at every tag and
    BeautifulSoup collapses each whitespace-only string to "\n" (if it holds one) or " ". Stray or
    crossed end tags are ignored by lxml, which would merge strings, so anything not properly
    nested also goes to the parser. The wrapper is added to the first and last strings instead of
    copying the whole markup once more.
    """
    for char in _NOT_PLAIN:
        if char in markup:
            return None
    parts: list[str] = []
    stack: list[str] = []
    pos = 0
    lt = markup.find("<")
    while lt != -1:
        match = _PLAIN_TAG.match(markup, lt)
        if match is None:
            return None
        if match.group(1):
            if not stack or stack[-1] != match.group(2):
                return None
            stack.pop()
        else:
            stack.append(match.group(2))
        if pos == 0:
            parts.append(collapse("\n" + markup[:lt]))
        elif lt > pos:
            parts.append(collapse(markup[pos:lt]))
        pos = match.end()
        lt = markup.find("<", pos)
    if stack:
        return None
    if pos == 0:
        return collapse("\n" + markup + "\n")
    parts.append(collapse(markup[pos:] + "\n"))
    return "".join(parts)


def collapse(string: str) -> str:
    """BeautifulSoup's rule for one string: whitespace-only becomes one newline or one space."""
    if not string.isspace() or string.strip(_ASCII_SPACES):  # isspace() stops at the first letter
        return string
    return "\n" if "\n" in string else " "


def _soup_text(wrapped: str) -> str:
    """The exact TrecDocs computation, for documents that hold real markup or entities."""
    from bs4 import BeautifulSoup

    return BeautifulSoup(wrapped, "lxml").get_text()


def docno(line: str) -> str:
    """The id on a <DOCNO> line, exactly as TrecDocs takes it."""
    return line.replace("<DOCNO>", "").replace("</DOCNO>\n", "").strip()


def _tag_line(line: str, state: FileState, pieces: list[str]) -> None:
    """TrecDocs' handling of one line that is neither <DOCNO> nor </DOC>."""
    if state.in_tag:
        pieces.append(line)
    if line.startswith("</") and _CLOSE_TAG.match(line):
        state.in_tag -= 1
    if line.startswith("<") and _OPEN_TAG.match(line):
        state.in_tag += 1
        if state.in_tag == 1:
            pieces.append(line)


def select_fast(doc: str, state: FileState) -> tuple[str | None, str]:
    """Id and markup of a document whose only line separator is "\\n".

    Only lines starting with "<" can change the state, so the text lines between two of them are
    copied as one slice instead of being looked at one by one.
    """
    doc_id: str | None = None
    pieces: list[str] = []
    size = len(doc)
    seg = 0
    if doc.startswith("<"):
        p = 0
    else:
        q = doc.find("\n<")
        p = q + 1 if q != -1 else -1
    while p != -1:
        if state.in_tag and p > seg:
            pieces.append(doc[seg:p])
        e = doc.find("\n", p)
        e = size if e == -1 else e + 1
        line = doc[p:e]
        if line.startswith("<DOCNO>"):
            doc_id = docno(line)
        else:
            _tag_line(line, state, pieces)
        seg = e
        q = doc.find("\n<", e - 1) if e < size else -1
        p = q + 1 if q != -1 else -1
    if state.in_tag and seg < size:
        pieces.append(doc[seg:])
    return doc_id, "".join(pieces)


def select_lines(doc: str, state: FileState) -> tuple[str | None, str]:
    """Id and markup line by line with str.splitlines, exactly as TrecDocs' codecs reader splits."""
    doc_id: str | None = None
    pieces: list[str] = []
    for line in doc.splitlines(keepends=True):
        if line.startswith("<DOCNO>"):
            doc_id = docno(line)
        else:
            _tag_line(line, state, pieces)
    return doc_id, "".join(pieces)
