"""What both databases can hold: one set of limits, checked by every reader before writing.

SQLite stores any length and any 64-bit integer; PostgreSQL refuses a string longer than its
column's `VARCHAR(n)` (or, silently for an INTEGER bound as a number, wraps it), a SMALLINT
beyond ±32767, and a NUL character anywhere in text. So the limits below are PostgreSQL's, the
schema's columns are declared from the same constants (`schema/*.py`), and every file reader
(`tcdb.collections`) checks each value against them and refuses a file with one line naming
file, line and reason before anything is written — the same on both databases.

Characters, decided per kind of field:

* **identifiers** (topic, document and run-entry ids, qrels iterations, URLs of documents):
  non-empty, at most their column's length, and neither whitespace (`str.isspace`, Unicode's
  too: an id is one column of a whitespace-separated file, and export writes it back as one)
  nor control characters (Unicode category Cc: C0, DEL, C1) — refused with file and line;
* **free text** (document text, a topic's query, description, narrative and fields, a
  publication's title and notes): the C0 control characters that are not whitespace (NUL,
  U+0001-U+0008, U+000E-U+001B: NUL cannot be stored on PostgreSQL, and none of them is
  text) are dropped at read. The whitespace ones (tab, LF, VT, FF, CR, U+001C-U+001F) are kept:
  they separate words, the reference readers (ir_datasets' TrecDocs) keep them, and they leave
  the document's content hash and token count as they were. (TREC SGML documents are read as
  TrecDocs reads them: its markup parser has already made U+FFFD of a NUL.) Text is data:
  nothing in it is refused, and the terminal, CSV and dashboard escape what they show.

Names a user gives (collections, snapshots, qrels sets, run tags, systems, groups) follow their
own rule (`tcdb.names`), with `NAME_LENGTH` from here.
"""

from __future__ import annotations

import re

# --- lengths (characters), the schema's VARCHAR sizes ------------------------------------------
NAME_LENGTH = 200  # names of collections, snapshots, qrels sets, pools, topic sets, runs, systems
TOPIC_ID_LENGTH = 200  # snapshot_topic.external_id
DOC_ID_LENGTH = 500  # run_entry_unresolved / judgment_unresolved.external_doc_id
ITERATION_LENGTH = 32  # judgment.iteration: the qrels file's second column
MEASURE_LENGTH = 100  # measure.name, reported_result.metric
LABEL_LENGTH = 32  # short vocabulary words: a document's source label, a category, a method
CHECKSUM_LENGTH = 128
VERSION_LENGTH = 100  # run.version, run_version.version, published_result.version

# --- integer ranges (inclusive), the schema's integer types ------------------------------------
INT32 = (-(2**31), 2**31 - 1)  # INTEGER
INT16 = (-(2**15), 2**15 - 1)  # SMALLINT
RANK_RANGE = INT32  # run_entry.rank
GRADE_RANGE = INT16  # judgment.grade
YEAR_RANGE = INT32

_SHOWN = 60  # characters of an offending value quoted in a message (a 10 MB id is not echoed)

# The C0 controls free text loses: those that are not whitespace (str.isspace). As a pattern,
# a translation table, and bytes for a C-speed look at a whole block of a file.
_TEXT_CONTROLS = re.compile("[\x00-\x08\x0e-\x1b]")
_TEXT_TABLE = dict.fromkeys(c for c in range(32) if not chr(c).isspace())
_TEXT_CONTROL_BYTES = bytes(_TEXT_TABLE)
# Control characters (Unicode category Cc: C0, DEL, C1).
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")
# Whitespace and control characters an identifier may not hold (str.isspace or category Cc).
_NOT_IN_ID = re.compile(
    "[\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
)


class Refused(ValueError):
    """A value beyond tcdb's limits or a format's grammar; its text is the reason, which the
    reader that met it turns into `InputError(file, line, reason)`."""


def shown(value: str) -> str:
    """A value as quoted in a message: repr, cut to a few dozen characters when long."""
    if len(value) <= _SHOWN:
        return repr(value)
    return f"{value[:_SHOWN]!r}… ({len(value)} characters)"


def check_identifier(value: str, what: str, limit: int) -> str:
    """`value` if it is a valid identifier (non-empty, at most `limit` characters, without
    whitespace or control characters); else `Refused` saying which rule it breaks."""
    if not value:
        raise Refused(f"empty {what}")
    if len(value) > limit:
        raise Refused(f"{what} {shown(value)} is longer than {limit} characters")
    bad = _NOT_IN_ID.search(value)
    if bad is not None:
        char = bad.group()
        kind = "whitespace" if char.isspace() else "a control character"
        raise Refused(f"{what} {shown(value)} contains {kind} (U+{ord(char):04X}); "
                      "an id is one word")
    return value


def check_length(value: str, what: str, limit: int) -> str:
    """`value` if at most `limit` characters and free of control characters (a short label
    such as a model's or a venue's, stored in a VARCHAR column); else `Refused`."""
    if len(value) > limit:
        raise Refused(f"{what} {shown(value)} is longer than {limit} characters")
    return check_characters(value, what)


def check_characters(value: str, what: str) -> str:
    """`value` if free of control characters (Unicode Cc: C0, DEL, C1), else `Refused`: for
    values that are not free text yet may hold spaces (a URL, a label)."""
    bad = _CONTROLS.search(value)
    if bad is not None:
        raise Refused(f"{what} {shown(value)} contains a control character "
                      f"(U+{ord(bad.group()):04X})")
    return value


def check_range(value: int, what: str, bounds: tuple[int, int]) -> int:
    """`value` if within `bounds` (inclusive), else `Refused` naming them."""
    low, high = bounds
    if not low <= value <= high:
        raise Refused(f"{what} {value} is out of range [{low}, {high}]")
    return value


def clean_text(text: str) -> str:
    """Free text as both databases store it: the C0 controls that are not whitespace (NUL
    among them) dropped. Unchanged, and cheap, when there are none."""
    if _TEXT_CONTROLS.search(text) is None:
        return text
    return text.translate(_TEXT_TABLE)


def clean_text_counted(text: str) -> tuple[str, int]:
    """`clean_text`, and how many characters it removed: a reader records the count on its
    record, so that the change is said (`DocumentRecord.removed`)."""
    cleaned = clean_text(text)
    return cleaned, len(text) - len(cleaned)


def needs_cleaning(data: bytes) -> bool:
    """Whether UTF-8 bytes hold a control character `clean_text` drops: one C-speed pass
    (~0.5 ns a byte) that lets a reader skip `clean_text` for a whole block of a file."""
    return len(data.translate(None, _TEXT_CONTROL_BYTES)) != len(data)
