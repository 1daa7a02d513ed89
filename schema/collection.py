"""Collections, their snapshots, and the documents and topics that persist across snapshots."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import JSON, BigInteger, Column, LargeBinary, Text, UniqueConstraint, false, true
from sqlmodel import Field, SQLModel

from tcdb.limits import CHECKSUM_LENGTH, LABEL_LENGTH, NAME_LENGTH, TOPIC_ID_LENGTH
from tcdb.schema.base import Keyed, aware_datetime, enum_column, utcnow
from tcdb.schema.enums import DocIdentity, SnapshotStatus, TopicIdentity, TopicMatch


class Collection(Keyed, SQLModel, table=True):
    """A managed test collection (`longeval-web`, `trec8-adhoc`) and its identity rules."""

    __tablename__ = "collection"

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=NAME_LENGTH, unique=True)
    doc_identity: DocIdentity = Field(
        default=DocIdentity.doc_id, sa_column=Column(enum_column(DocIdentity, "doc_identity"),
                                                     nullable=False)
    )
    topic_identity: TopicIdentity = Field(
        default=TopicIdentity.query_id,
        sa_column=Column(enum_column(TopicIdentity, "topic_identity"), nullable=False),
    )
    # Under topic identity by text: which texts are one topic (migration 0015).
    topic_match: TopicMatch = Field(
        default=TopicMatch.normalised,
        sa_column=Column(enum_column(TopicMatch, "topic_match"), nullable=False,
                         server_default=TopicMatch.normalised.value),
    )
    # With doc_identity=url: a document without a URL keeps its id as its key instead of failing.
    id_fallback: bool = Field(default=False)
    # The relevance scale judgments must fall in (None: any integer).
    grade_min: int | None = None
    grade_max: int | None = None
    description: str | None = Field(default=None, sa_column=Column(Text))
    created_at: dt.datetime = Field(default_factory=utcnow, sa_type=aware_datetime())


class Snapshot(Keyed, SQLModel, table=True):
    """One point in time of a collection. Visible only when `complete`."""

    __tablename__ = "snapshot"
    __table_args__ = (UniqueConstraint("collection_id", "label"),)

    id: int | None = Field(default=None, primary_key=True)
    collection_id: int = Field(foreign_key="collection.id", ondelete="CASCADE", index=True)
    label: str = Field(max_length=NAME_LENGTH)
    date: dt.date | None = None
    source: str = Field(sa_column=Column(Text, nullable=False))
    source_fingerprint: str = Field(max_length=CHECKSUM_LENGTH)
    ordinal: int = 0
    status: SnapshotStatus = Field(
        default=SnapshotStatus.ingesting,
        sa_column=Column(enum_column(SnapshotStatus, "snapshot_status"), nullable=False),
    )
    with_text: bool = True
    # False: registered without documents (`tcdb snapshot register`: its topics, or the topic
    # ids its published scores name), so its runs are per-topic scores only; an ingest of its
    # documents later fills it in place (migration 0015).
    with_documents: bool = Field(default=True, sa_column_kwargs={"server_default": true()})
    # Its topics are the ids its imported scores named (no topics file): ids without texts.
    topics_from_scores: bool = Field(default=False, sa_column_kwargs={"server_default": false()})
    # The snapshot's one designated original qrels set (by name; sets are immutable): what
    # `snapshot list`, `snapshot diff` and the drift page count as its judgments.
    original_qrels: str | None = Field(default=None, max_length=NAME_LENGTH)
    n_documents: int = 0
    n_topics: int = 0
    n_judgments: int = 0
    # Whitespace tokens over the documents whose version has a count (`content.n_tokens`),
    # filled at ingest like the sizes above so `snapshot stats` reads four numbers, not 1M rows.
    tokens_counted: int | None = None
    tokens_total: int | None = Field(default=None, sa_type=BigInteger)
    tokens_min: int | None = None
    tokens_max: int | None = None
    # What the readers changed in the user's text (NUL and other control characters removed,
    # a query's surrounding spaces trimmed): the ingest's counts, kept with the snapshot so that
    # the change stays said after the summary has scrolled away (migration 0020).
    n_documents_edited: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    n_topics_edited: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    n_characters_removed: int = Field(default=0, sa_type=BigInteger,
                                      sa_column_kwargs={"server_default": "0"})
    # Lines its readers set aside (`--on-bad-lines warn|skip`; the rejects file has them).
    n_rejected: int = Field(default=0, sa_column_kwargs={"server_default": "0"})
    created_at: dt.datetime = Field(default_factory=utcnow, sa_type=aware_datetime())
    completed_at: dt.datetime | None = Field(default=None, sa_type=aware_datetime())
    error: str | None = Field(default=None, sa_column=Column(Text))


class Document(Keyed, SQLModel, table=True):
    """A document's stable identity in a collection: its id or its URL, by the collection's rule.

    Written in bulk by `tcdb.ingest`, without a FOREIGN KEY to `collection`: its per-row
    trigger check cost ~10 % of an ingest (migration 0005), and the ingest writes only the
    collection id it resolved in the same transaction.
    """

    __tablename__ = "document"
    __table_args__ = (UniqueConstraint("collection_id", "key"),)

    id: int | None = Field(default=None, primary_key=True)
    collection_id: int
    key: str = Field(sa_column=Column(Text, nullable=False))


class Content(Keyed, SQLModel, table=True):
    """One version of a document's text, stored once however many snapshots share it.

    On PostgreSQL the text is lz4-compressed and kept in the row (STORAGE MAIN), not in TOAST
    chunks: migrations 0001 and 0004, measured by bench/ingest.py.
    """

    __tablename__ = "content"

    id: int | None = Field(default=None, primary_key=True)
    hash: bytes = Field(sa_column=Column(LargeBinary(16), nullable=False, unique=True))  # xxh3-128
    length: int  # characters of the normalised text
    # Whitespace tokens of the text (`len(text.split())`), counted by the ingest's reader even
    # when the text is not kept, so `snapshot stats` reads no text (migration 0011). None on
    # rows written before 0011 whose text was not kept.
    n_tokens: int | None = None
    text: str | None = Field(default=None, sa_column=Column(Text))


class SnapshotDocument(SQLModel, table=True):
    """Membership: which document, under which external id, with which content, is in a snapshot.

    One row per document per snapshot, written in bulk by `tcdb.ingest`. Like `RunEntry`, it
    carries no FOREIGN KEY constraints: their per-row trigger checks, and the two indexes
    that only served them, cost a fifth of a LongEval ingest (bench/ingest.py). The ingest
    writes only ids it has just resolved in the same transaction, and `tcdb.storage.housekeeping`
    deletes the rows with their snapshot.

    Who wrote the document (`source_label`: human, llm, …) and the original an LLM text was
    rewritten from (`twin_of`: that original's external id in the same snapshot) belong here,
    not to `content`: an LLM rewrite whose text equals its original shares the original's
    content row but is still the LLM's (migration 0010).
    """

    __tablename__ = "snapshot_document"
    __table_args__ = (UniqueConstraint("snapshot_id", "external_id"),)

    snapshot_id: int = Field(primary_key=True)
    document_id: int = Field(primary_key=True)
    external_id: str = Field(sa_column=Column(Text, nullable=False))
    content_id: int
    source_label: str | None = Field(default=None, max_length=LABEL_LENGTH)  # human / llm / …
    twin_of: str | None = Field(default=None, sa_column=Column(Text))


class Topic(Keyed, SQLModel, table=True):
    """A topic's stable identity within a collection: its id, or its normalised query text."""

    __tablename__ = "topic"
    __table_args__ = (UniqueConstraint("collection_id", "key"),)

    id: int | None = Field(default=None, primary_key=True)
    collection_id: int = Field(foreign_key="collection.id", ondelete="CASCADE")
    key: str = Field(sa_column=Column(Text, nullable=False))


class SnapshotTopic(SQLModel, table=True):
    """A topic as one snapshot states it: external id, query, description, narrative.

    `query` is NULL for a topic known by its id alone (a snapshot registered from topic ids or
    from the ids its published scores name); an ingest of the snapshot's topics fills it.
    """

    __tablename__ = "snapshot_topic"
    __table_args__ = (UniqueConstraint("snapshot_id", "external_id"),)

    snapshot_id: int = Field(foreign_key="snapshot.id", primary_key=True, ondelete="CASCADE")
    topic_id: int = Field(foreign_key="topic.id", primary_key=True)
    external_id: str = Field(max_length=TOPIC_ID_LENGTH)
    query: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    description: str | None = Field(default=None, sa_column=Column(Text))
    narrative: str | None = Field(default=None, sa_column=Column(Text))
    fields: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON))
    # Under topic identity by text: another topic of this snapshot has the same query text, so
    # this one keeps an identity of its own and matches no topic of another snapshot.
    ambiguous: bool = False
