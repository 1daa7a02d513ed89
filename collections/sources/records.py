"""The records every source yields: documents, topics and judgments, in the field's words.

Readers in this package turn files (TREC, JSONL/BEIR, ir_datasets) into these records; the core
(`tcdb.ingest`) turns records into rows. Keeping them small, frozen and format-free is what lets
one ingest path serve every source. `delimiter_of` is the one rule that tells the separator of
the delimited tables (CSV, TSV) the readers accept.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

SEPARATORS = (",", "\t", ";")  # what spreadsheets save delimited tables with


def delimiter_of(header: str, *, suffix: str = "", columns: Collection[str] = ()) -> str:
    """The field separator of a delimited table, from its header line: the one rule every
    reader of CSV/TSV tables (judgments, run metadata, contamination verdicts, reported
    results) applies.

    With `columns` (names the header must hold): the first of comma, tab and semicolon that
    splits the header into cells naming them all — a spreadsheet saved with tabs or
    semicolons —, else the comma. Without: the tab for a `.tsv` file or a header holding a
    tab, else the comma.
    """
    if columns:
        wanted = {name.lower() for name in columns}
        for candidate in SEPARATORS:
            names = {cell.strip().strip('"').lower() for cell in header.split(candidate)}
            if wanted <= names:
                return candidate
        return ","
    return "\t" if suffix.lower() == ".tsv" or "\t" in header else ","


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    """One document of one snapshot, as its source gives it."""

    doc_id: str
    text: str
    url: str | None = None
    source: str | None = None  # who wrote it: "human", "llm", … (source-bias studies)
    twin_of: str | None = None  # the id of the original an LLM text was rewritten from
    removed: int = 0  # characters the reader took out of the text (NUL, …): counted and said


@dataclass(frozen=True, slots=True)
class Rejected:
    """A line (a record) a reader set aside under `--on-bad-lines warn|skip`, in the stream in
    its place: where it is and why, so the ingest writes it to the rejects file and counts it.
    Picklable, so it crosses from a reader process like the records around it."""

    file: str
    line: int | None
    reason: str


@dataclass(frozen=True, slots=True)
class TopicRecord:
    """One topic (query) of one snapshot."""

    topic_id: str
    query: str
    description: str | None = None
    narrative: str | None = None
    fields: dict[str, str] = field(default_factory=dict)
    removed: int = 0  # characters the reader took out of its texts (NUL, …): counted and said


@dataclass(frozen=True, slots=True)
class QrelRecord:
    """One judgment: a relevance grade of a document for a topic. `line` points into `file`;
    `iteration` is TREC qrels' second column as given (TREC-COVID: the round that judged it)."""

    topic_id: str
    doc_id: str
    grade: int
    file: str | None = None
    line: int | None = None
    iteration: str | None = None


def is_json_id(value: object) -> bool:
    """Whether a JSON value can be an id (of a document, a topic, a twin): a string or an
    integer. Never a boolean (`true` is an int to Python), null, a number with a fraction or
    an object, whose `str()` would store `True`, `None`, `1.5` or `{'a': 1}` as an id."""
    return isinstance(value, str | int) and not isinstance(value, bool)
