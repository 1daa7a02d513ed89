"""Which runs of a report name the model family of an LLM that judged its qrels
(`tcdb.analysis.circularity`): read from the runs' ir_metadata, description and platform, for
every report's lineage, so each figure that ranks such a run under such qrels says so."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel
from sqlalchemy import select
from sqlmodel import Session, col

from tcdb.analysis.circularity import model_family, names_family, strings_in

# ir_metadata's top-level fields that name the run or the format, never its models
NAMES_ONLY = frozenset({"tag", "run-version", "schema-version"})


class CircularRun(BaseModel):
    """A run ranked under qrels an LLM of its own model family judged."""

    snapshot: str
    run: str
    qrels: str  # SNAPSHOT/NAME of the LLM-judged set
    model: str  # the judge's model (as its provenance names it)
    family: str
    named_as: str  # the word of the run's description that names the family

    def line(self) -> str:
        """One sentence, for a terminal, a caption or a comment."""
        return (f"circularity: run {self.snapshot}/{self.run} names {self.named_as!r} "
                f"({self.family} family), the family of {self.model}, which judged qrels "
                f"{self.qrels}")


def circular_runs(session: Session, collection: str, runs: Sequence[tuple[str, str]],
                  judges: Sequence[tuple[str, str]]) -> list[CircularRun]:
    """Each (run, LLM-judged qrels set) of a report where the run names the judge's family:
    `runs` as (snapshot, tag), `judges` as (SNAPSHOT/NAME of the set, the LLM's model)."""
    if not judges or not runs:
        return []
    texts = _run_texts(session, collection, runs)
    found: list[CircularRun] = []
    for qrels, model in judges:
        family = model_family(model.split("@", 1)[0])  # `gpt-4o@2024-08-06`: its revision
        for snapshot, tag in runs:
            named = names_family(texts.get((snapshot, tag), []), family)
            if named is not None:
                found.append(CircularRun(snapshot=snapshot, run=tag, qrels=qrels, model=model,
                                         family=family, named_as=named))
    return found


def _run_texts(session: Session, collection: str, runs: Sequence[tuple[str, str]]
               ) -> dict[tuple[str, str], list[str]]:
    """(snapshot, tag) → what the run says of itself: its ir_metadata's every string (but its
    tag and versions), its description and platform."""
    from tcdb.schema import Collection, Run, Snapshot

    query = (select(col(Snapshot.label), col(Run.tag), col(Run.meta), col(Run.description),
                    col(Run.platform))
             .join(Snapshot, col(Snapshot.id) == col(Run.snapshot_id))
             .join(Collection, col(Collection.id) == col(Snapshot.collection_id))
             .where(col(Collection.name) == collection,
                    col(Snapshot.label).in_({snapshot for snapshot, _ in runs}),
                    col(Run.tag).in_({tag for _, tag in runs})))
    texts: dict[tuple[str, str], list[str]] = {}
    for label, tag, meta, description, platform in session.execute(query):
        ir: Any = (meta or {}).get("ir_metadata") or {}
        data = ir.get("data") if isinstance(ir, dict) else None
        if isinstance(data, dict):  # names, not descriptions: a tag says nothing of a model
            data = {k: v for k, v in data.items() if k not in NAMES_ONLY}
        said = list(strings_in(data))
        texts[(label, tag)] = said + [t for t in (description, platform) if t]
    return texts
