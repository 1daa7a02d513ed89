"""What an ingest did: counts, speed and warnings, for the CLI, flows' artifacts and tests."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from dataclasses import fields as dataclass_fields
from typing import TYPE_CHECKING, Any

from tcdb.collections.sources.records import Rejected
from tcdb.operations import Result

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class IngestReport:
    """What an ingest did, for the CLI summary, flows' artifacts and tests.

    Each document of the snapshot is one of: new (`n_new_documents`: first seen in the
    collection), changed or unchanged since `previous_snapshot` (the one before it in snapshot
    order), or seen before but not in that snapshot. `n_new_contents` counts texts stored for the
    first time (storage, not drift: a new document usually brings one too).
    """

    collection: str
    label: str
    status: str  # "ingested" | "unchanged"
    source: str
    n_documents: int = 0
    n_new_documents: int = 0  # first seen in the collection
    n_new_contents: int = 0  # texts stored for the first time
    n_changed_documents: int = 0  # in the previous snapshot with another text
    n_unchanged_documents: int = 0  # in the previous snapshot with the same text
    previous_snapshot: str | None = None  # the label compared with, if there is one
    n_topics: int = 0
    n_ambiguous_topics: int = 0  # topics whose query text another topic shares (by text)
    n_judgments: int = 0
    n_repeated: int = 0  # repeats of a document id with the same text, kept once
    n_conflicting: int = 0  # repeats with another text, resolved by --on-duplicate
    n_by_source: dict[str, int] = field(default_factory=dict)  # human / llm / …; {} unlabelled
    # texts a reader changed: documents and topics whose control characters (NUL, …) it
    # removed, and how many characters in all (also said in `warnings`)
    n_documents_edited: int = 0
    n_topics_edited: int = 0
    n_characters_removed: int = 0
    # lines the readers set aside (`--on-bad-lines warn|skip`), and where they were written
    rejected: list[Rejected] = field(default_factory=list)
    rejects_file: str | None = None
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)

    @property
    def n_rejected(self) -> int:
        return len(self.rejected)

    @property
    def docs_per_second(self) -> float:
        return self.n_documents / self.seconds if self.seconds else 0.0

    @property
    def n_returning_documents(self) -> int:
        """Documents the collection had seen, but not in the previous snapshot."""
        return max(self.n_documents - self.n_new_documents - self.n_changed_documents
                   - self.n_unchanged_documents, 0)

    def documents_summary(self) -> str:
        """The documents in plain words, e.g. "800,000 documents: 800,000 first seen, 0 changed
        since 2022-06, 0 unchanged" (the old "N new, M new versions" read as a contradiction)."""
        head = f"{self.n_documents:,} document{'' if self.n_documents == 1 else 's'}"
        parts = [f"{self.n_new_documents:,} first seen"]
        if self.previous_snapshot is not None:
            parts += [f"{self.n_changed_documents:,} changed since {self.previous_snapshot}",
                      f"{self.n_unchanged_documents:,} unchanged"]
        returning = self.n_returning_documents
        if returning:
            where = f" but not in {self.previous_snapshot}" if self.previous_snapshot else ""
            parts.append(f"{returning:,} seen before{where}")
        if self.previous_snapshot is None and not returning:
            parts.append("no earlier snapshot to compare with")
        return f"{head}: {', '.join(parts)}"

    def as_dict(self) -> dict[str, Any]:
        said = asdict(self)
        del said["rejected"]  # in the rejects file; the count and the file name stay here
        return {**said, "n_rejected": self.n_rejected,
                "n_returning_documents": self.n_returning_documents,
                "docs_per_second": round(self.docs_per_second, 1)}


class SnapshotIngestResult(Result):
    """What an ingest did (`IngestReport` as the `snapshot_ingest` operation returns it)."""

    collection: str
    label: str
    status: str  # ingested | unchanged
    source: str
    n_documents: int
    n_new_documents: int
    n_new_contents: int
    n_changed_documents: int
    n_unchanged_documents: int
    previous_snapshot: str | None
    n_topics: int
    n_ambiguous_topics: int
    n_judgments: int
    n_repeated: int
    n_conflicting: int
    n_by_source: dict[str, int]
    n_documents_edited: int
    n_topics_edited: int
    n_characters_removed: int
    rejects_file: str | None
    seconds: float
    warnings: list[str]
    n_rejected: int
    n_returning_documents: int
    docs_per_second: float

    @classmethod
    def of(cls, report: IngestReport) -> SnapshotIngestResult:
        return cls(**report.as_dict())

    def documents_summary(self) -> str:
        """The documents in plain words (`IngestReport.documents_summary`)."""
        fields = {f.name for f in dataclass_fields(IngestReport)}
        return IngestReport(**{k: v for k, v in self.model_dump().items()
                               if k in fields}).documents_summary()

    def to_frame(self) -> pd.DataFrame:
        """One row: the snapshot and its counts (`n_by_source` as `n_source_<label>`)."""
        import pandas as pd

        row = self.model_dump(exclude={"n_by_source", "warnings"})
        row.update({f"n_source_{label}": n for label, n in self.n_by_source.items()})
        row["warnings"] = "; ".join(self.warnings)
        return pd.DataFrame([row])
