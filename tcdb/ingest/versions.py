"""A document version's identity: the xxh3-128 hash of its normalised text.

Pure functions, the hot path of ingest; no database.
"""

from __future__ import annotations

import re
import unicodedata

import xxhash


def normalise_text(text: str) -> str:
    """The text a version is identified by: NFC, whitespace runs collapsed, ends stripped."""
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    return " ".join(text.split())


def content_hash(normalised: str) -> bytes:
    return xxhash.xxh3_128_digest(normalised.encode("utf-8"))


# ASCII characters that str.split() treats as whitespace, all mapped to a space.
_ASCII_WHITESPACE = bytes(c for c in range(128) if chr(c).isspace())


_TO_SPACE = bytes.maketrans(_ASCII_WHITESPACE, b" " * len(_ASCII_WHITESPACE))
# The rest of them but space and newline: a text holding none (most do) needs only its
# newlines replaced, ~15x cheaper than translating every byte.
_RARE_WHITESPACE = tuple(chr(c) for c in _ASCII_WHITESPACE if c not in b" \n")


# Finds a run of spaces twice as fast as `b"  " in data` (sre's literal-prefix search).
_SPACE_RUN = re.compile(b"  ")


def version_of(text: str) -> tuple[bytes, int, int]:
    """(content hash, length, whitespace tokens) of the normalised text:
    `content_hash(normalise_text(text))`, its length and `len(text.split())`.

    The hot path of ingest. For ASCII text — most of a web crawl — the same normalisation runs
    on bytes: newlines replaced by spaces (or, in a text holding tabs, CRs or other ASCII
    whitespace, one C-speed translate of every whitespace character to a space), and a split and
    join only when runs of spaces remain inside (tested equal to the reference on every ASCII
    whitespace character). The tokens are counted here, in the reader, rather than by reading
    every text when `tcdb snapshot stats` asks (`content.n_tokens`, migration 0011): the split
    already made gives them for free, and a text with single spaces only costs one C-speed
    `count` of its spaces (~1 ns a byte).
    """
    if not text.isascii():  # normalise_text, keeping the tokens' count
        words = unicodedata.normalize("NFC", text).split()
        normalised = " ".join(words)
        return content_hash(normalised), len(normalised), len(words)
    data = text.encode("ascii")
    for char in _RARE_WHITESPACE:  # one memchr-speed look each: ~0.03 µs for 5 KB
        if char in text:
            data = data.translate(_TO_SPACE)
            break
    else:
        data = data.replace(b"\n", b" ")
    data = data.strip(b" ")
    if _SPACE_RUN.search(data):
        tokens = data.split()
        data = b" ".join(tokens)
        return xxhash.xxh3_128_digest(data), len(data), len(tokens)
    # Single spaces only: one token more than spaces, none in an empty text.
    return xxhash.xxh3_128_digest(data), len(data), (data.count(b" ") + 1 if data else 0)
