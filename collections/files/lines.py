"""Lines of a line-based text file, whatever its line ends: one rule for every reader."""

from __future__ import annotations


def text_lines(text: str) -> list[str]:
    """The lines of a line-based text file, whatever its line ends: LF, CRLF, CR alone (old Mac
    tools) or a mix. A lone CR is a line end, as in Python's text mode, so no convention can
    run records together into one line (a CR-only run imported as 1 entry of 4). Unlike
    `str.splitlines`, form feeds and other separators stay data of their line."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.split("\n")


def byte_lines(data: bytes) -> list[bytes]:
    """`text_lines` for bytes not decoded yet."""
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return data.split(b"\n")
