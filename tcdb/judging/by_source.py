"""Qrels per source: a snapshot's judgments restricted to the documents one source wrote.

Source-bias studies (Cocktail) score a run on the mixed corpus once per source: against the
judgments of the human-written documents only, and against those of the LLM-generated ones only.
The LLM rewrites of a Cocktail corpus carry no judgments of their own; Cocktail's rule gives each
rewrite its original's judgment (`twin_of`) when it has none, and `twins` (the default) applies
it. The `mixed` set is the union of the two: every document of either source with its (own or
copied) judgment, the qrels of the mixed corpus a run's effectiveness is measured on.

Derived here in memory for the report; stored, as `derived` qrels sets whose parent is the set
they restrict and whose provenance says how many judgments were copied, only when asked
(`tcdb qrels by-source`, or `tcdb report source-bias --save`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel
from sqlalchemy import Connection
from sqlmodel import Session, col, select

from tcdb.errors import ConflictError, FieldError, InputError, some
from tcdb.operations import Database, Name, Request, Result, argument, operation, option
from tcdb.reports.fields import qrels_option
from tcdb.schema import QrelsKind, QrelsSet, Snapshot

if TYPE_CHECKING:
    import pandas as pd

    from tcdb.judging.qrels import JudgmentRows

HUMAN, LLM, MIXED = "human", "llm", "mixed"


@dataclass
class SourceQrels:
    """One source's judgments (`[topic, doc, grade]`, integer ids) and how many were copied."""

    source: str
    frame: pd.DataFrame
    n_copied: int

    @property
    def n_judgments(self) -> int:
        return len(self.frame)


def derive_source_qrels(conn: Connection, snap: Snapshot, parent: QrelsSet,
                        sources: Sequence[str] = (HUMAN, LLM),
                        copy_twins: bool = True) -> dict[str, SourceQrels]:
    """Each source's judgments of `parent`, and `mixed` (their union); a source no document
    of the snapshot carries is an error, not an empty set."""
    import pandas as pd

    from tcdb.analysis.source_bias import source_qrels
    from tcdb.queries import document_sources, load_judgments

    if len(set(sources)) != len(sources) or MIXED in sources:
        raise FieldError("human/llm", f"two different sources other than {MIXED!r}, "
                         f"not {', '.join(sources)}")
    members = document_sources(conn, snap.pk)
    present = set(members["source"].tolist())
    missing = [s for s in sources if s not in present]
    if missing:
        known = some(sorted(present)) or "none"
        raise InputError(f"snapshot {snap.label}", None,
                         f"no document is labelled {missing[0]!r} (labels in the snapshot: "
                         f"{known}); label documents at ingest with the JSONL fields "
                         "source/twin_of or --source-labels FILE")
    judgments = load_judgments(conn, parent.pk)
    out = {s: SourceQrels(s, *source_qrels(judgments, members, s, copy_twins))
           for s in sources}
    out[MIXED] = SourceQrels(MIXED, pd.concat([q.frame for q in out.values()],
                                              ignore_index=True),
                             sum(q.n_copied for q in out.values()))
    return out


def as_ir_measures(qrels: SourceQrels, topics: dict[int, str], documents: dict[int, str]
                   ) -> dict[str, dict[str, int]]:
    """The judgments as ir_measures' dict of dicts of external ids, on `topics` only."""
    out: dict[str, dict[str, int]] = {}
    frame = qrels.frame
    for topic, doc, grade in zip(frame["topic"].tolist(), frame["doc"].tolist(),
                                 frame["grade"].tolist(), strict=True):
        if topic in topics:
            out.setdefault(topics[topic], {})[documents[doc]] = int(grade)
    return out


def set_name(prefix: str, source: str) -> str:
    """The stored name of a source's set: `<prefix>-<source>`."""
    return f"{prefix}-{source}"


def store_source_qrels(session: Session, snap: Snapshot, parent: QrelsSet, prefix: str,
                       derived: dict[str, SourceQrels], copy_twins: bool,
                       field: str = "prefix") -> dict[str, str]:
    """Store each source's set as `derived` (parent: `parent`), or reuse a stored set of that
    name with the same judgments; source → name. Another set under the name is refused: qrels
    sets are immutable."""
    from tcdb.judging.qrels import create_qrels_set, stored_judgments
    from tcdb.names import made_name

    names: dict[str, str] = {}
    for source, qrels in derived.items():
        name = made_name(set_name(prefix, source), field)  # `field` gave the prefix
        rows: JudgmentRows = {(int(t), int(d)): (int(g), None) for t, d, g in zip(
            qrels.frame["topic"].tolist(), qrels.frame["doc"].tolist(),
            qrels.frame["grade"].tolist(), strict=True)}
        existing = session.exec(select(QrelsSet).where(
            col(QrelsSet.snapshot_id) == snap.pk, col(QrelsSet.name) == name)).first()
        if existing is not None:
            stored = {k: (g, None) for k, (g, _) in stored_judgments(session, existing.pk).items()}
            if existing.kind != QrelsKind.derived or existing.parent_id != parent.id \
                    or stored != rows:
                raise ConflictError(f"qrels set {name!r} of {snap.label!r} exists with other "
                                    "judgments: qrels sets are immutable; save under another "
                                    "name")
            names[source] = name
            continue
        create_qrels_set(session, snap, name, QrelsKind.derived, rows, parent_id=parent.id,
                         method=_method(source, copy_twins),
                         description=_description(parent, snap, source, qrels, copy_twins))
        names[source] = name
    return names


def _method(source: str, copy_twins: bool) -> str:
    return f"by-source:{source}" + ("+twins" if copy_twins else "")


def _description(parent: QrelsSet, snap: Snapshot, source: str, qrels: SourceQrels,
                 copy_twins: bool) -> str:
    what = "either source" if source == MIXED else f"source {source!r}"
    copied = (f"; {qrels.n_copied:,} of its {qrels.n_judgments:,} judgments copied from the "
              "original of a twin that had none of its own (Cocktail's rule)") \
        if copy_twins else "; twins' judgments not copied"
    return (f"judgments of {parent.name!r} on the documents of {what} in snapshot "
            f"{snap.label!r}{copied}")


class QrelsBySourceRequest(Request):
    """Which qrels set to split by document source, and under which names."""

    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot label.")
    prefix: Name = argument(help="Name prefix of the new sets: PREFIX-human, PREFIX-llm, "
                           "PREFIX-mixed.")
    qrels: Name = qrels_option()  # original: the snapshot's designated original set
    human: str = option(HUMAN, metavar="LABEL", help="Source label of human-written documents.")
    llm: str = option(LLM, metavar="LABEL", help="Source label of LLM-generated documents.")
    twins: bool = option(True, help="Copy an original's judgment to its LLM twin when the twin "
                         "has none (Cocktail's rule; --no-twins: do not).")


class SourceSetStored(BaseModel):
    """One stored per-source set."""

    source: str
    name: str
    parent: str
    n_judgments: int
    n_copied: int  # judgments copied from a twin's original


class QrelsBySourceResult(Result):
    """The derived per-source sets, stored (or found stored with the same judgments)."""

    collection: str
    snapshot: str
    sets: list[SourceSetStored]

    def to_frame(self) -> pd.DataFrame:
        """`source, name, parent, n_judgments, n_copied`, one row per stored set."""
        import pandas as pd

        return pd.DataFrame([s.model_dump() for s in self.sets],
                            columns=["source", "name", "parent", "n_judgments", "n_copied"])


@operation("qrels_by_source", command="qrels by-source", writes=True)
def qrels_by_source(request: QrelsBySourceRequest, db: Database) -> QrelsBySourceResult:
    """Store a qrels set's judgments per document source as derived sets (parent: the set).

    PREFIX-human keeps the judgments of documents labelled human in the snapshot, PREFIX-llm
    those of documents labelled llm — an LLM twin without a judgment of its own for a topic
    gets its original's (Cocktail's rule; counted in the set's provenance) — and PREFIX-mixed
    both. Running it again with the same judgments is a no-op.
    """
    from tcdb.catalog.collections import get_snapshot
    from tcdb.judging.qrels import get_qrels_set

    collection, snapshot = request.collection, request.snapshot
    waiting = f"waiting for another process importing qrels into {snapshot!r} to finish …"
    with db.write_session(f"qrels\x00{collection}\x00{snapshot}", waiting=waiting) as session:
        snap = get_snapshot(session, collection, snapshot)
        parent = get_qrels_set(session, snap, parent_name(snap, request.qrels))
        derived = derive_source_qrels(session.connection(), snap, parent,
                                      (request.human, request.llm), request.twins)
        names = store_source_qrels(session, snap, parent, request.prefix, derived,
                                   request.twins)
    return QrelsBySourceResult(collection=collection, snapshot=snapshot, sets=[
        SourceSetStored(source=source, name=names[source], parent=parent.name,
                        n_judgments=q.n_judgments, n_copied=q.n_copied)
        for source, q in derived.items()])


def parent_name(snap: Snapshot, qrels: str | None) -> str:
    """The qrels set to restrict: the one named, else the snapshot's designated original
    (`original` is it too, read by `tcdb.judging.qrels.get_qrels_set`)."""
    if qrels is not None:
        return qrels
    if snap.original_qrels is None:
        raise FieldError("qrels", f"snapshot {snap.label!r} has no original qrels: name the "
                         "set to restrict")
    return snap.original_qrels
