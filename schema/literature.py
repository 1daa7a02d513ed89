"""Effectiveness figures reported in the literature, for longitudinal trend charts."""

from __future__ import annotations

from sqlalchemy import Column, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

from tcdb.limits import LABEL_LENGTH, MEASURE_LENGTH, NAME_LENGTH
from tcdb.schema.base import Keyed, enum_column
from tcdb.schema.enums import ResultRole


class ReportedResult(Keyed, SQLModel, table=True):
    """One figure of one publication: a model's best or baseline value of a metric.

    A publication reports a (model, role, metric) once: the key that makes a re-import of the
    same file a no-op.
    """

    __tablename__ = "reported_result"
    __table_args__ = (UniqueConstraint("collection_id", "publication", "model", "role", "metric"),)

    id: int | None = Field(default=None, primary_key=True)
    collection_id: int = Field(foreign_key="collection.id", ondelete="CASCADE", index=True)
    publication: str = Field(sa_column=Column(Text, nullable=False))
    year: int
    venue: str | None = Field(default=None, max_length=NAME_LENGTH)
    model: str = Field(max_length=NAME_LENGTH)
    category: str | None = Field(default=None, max_length=LABEL_LENGTH)  # vocabulary.ModelCategory
    role: ResultRole = Field(
        default=ResultRole.other,
        sa_column=Column(enum_column(ResultRole, "result_role"), nullable=False),
    )
    metric: str = Field(max_length=MEASURE_LENGTH)
    value: float
    cross_validated: bool = False
    notes: str | None = Field(default=None, sa_column=Column(Text))
