"""The records every source yields: documents, topics and judgments, in the field's words.

Readers in this package turn files (TREC, JSONL/BEIR, ir_datasets) into these records; the core
(`tcdb.ingest`) turns records into rows. Keeping them small, frozen and format-free is what lets
one ingest path serve every source.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    """One document of one snapshot, as its source gives it."""

    doc_id: str
    text: str
    url: str | None = None
    source: str | None = None  # who wrote it: "human", "llm", … (source-bias studies)
    twin_of: str | None = None  # the id of the original an LLM text was rewritten from


@dataclass(frozen=True, slots=True)
class TopicRecord:
    """One topic (query) of one snapshot."""

    topic_id: str
    query: str
    description: str | None = None
    narrative: str | None = None
    fields: dict[str, str] = field(default_factory=dict)


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
