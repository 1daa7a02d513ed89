"""Named topic subsets (core topics, contamination-free topics, …) any analysis can use."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from tcdb.limits import NAME_LENGTH
from tcdb.schema.base import Keyed, aware_datetime, utcnow


class TopicSet(Keyed, SQLModel, table=True):
    __tablename__ = "topic_set"
    __table_args__ = (UniqueConstraint("collection_id", "name"),)

    id: int | None = Field(default=None, primary_key=True)
    collection_id: int = Field(foreign_key="collection.id", ondelete="CASCADE")
    name: str = Field(max_length=NAME_LENGTH)
    description: str | None = Field(default=None, sa_column=Column(Text))
    # the model the set was derived for (an LLM's not-seen topics); None: any model
    for_model: str | None = Field(default=None, max_length=NAME_LENGTH)
    # how: `contamination-quiz`, `core of A, B`, `file`, `list`, or the user's word
    method: str | None = Field(default=None, sa_column=Column(Text))
    created_at: datetime = Field(default_factory=utcnow, sa_type=aware_datetime())


class TopicSetMember(SQLModel, table=True):
    __tablename__ = "topic_set_member"

    topic_set_id: int = Field(foreign_key="topic_set.id", primary_key=True, ondelete="CASCADE")
    topic_id: int = Field(foreign_key="topic.id", primary_key=True)
