"""Contamination files: per (model, topic) a score of how likely the model has seen the topic.

A contamination quiz (e.g. asking an LLM to complete a topic's narrative, or to pick the real
query among paraphrases) gives each (model, topic) a score; a score at or above its threshold
means the model has likely seen the topic. `topic_set_import` turns such a file into one
topic set per model of the topics it has NOT likely seen — the subset its results should be
re-evaluated on (`tcdb report subset`) — with `for_model` the model and `method`
`contamination-quiz`.

The file is a TSV or CSV with a header naming the columns `model`, `topic`, `score` and
optionally `threshold` (a row's own threshold; `--threshold` for rows without one). A set holds
only topics the file scores for that model: a topic it does not list is not known to be clean.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tcdb.catalog.topic_sets import TopicSetResult
from tcdb.collections.sources.records import delimiter_of
from tcdb.errors import FieldError, InputError, NotFoundError
from tcdb.names import BadName, check_name, made_name
from tcdb.operations import Database, Name, Request, Result, argument, operation, option

if TYPE_CHECKING:
    import pandas as pd

METHOD = "contamination-quiz"
COLUMNS = ("model", "topic", "score")


@dataclass(frozen=True)
class Verdict:
    """One row of a contamination file: did `model` likely see `topic`?"""

    line: int
    model: str
    topic: str
    score: float
    threshold: float

    @property
    def seen(self) -> bool:
        return self.score >= self.threshold


def read_contamination(path: Path, threshold: float | None = None) -> list[Verdict]:
    """Every row of a contamination file, checked: columns, numbers, thresholds, duplicates.

    The delimiter is the tab for a .tsv or when the header has one, else the comma
    (`delimiter_of`); CRLF line endings and a byte-order mark are fine; blank lines are
    skipped. Errors name the file and line.
    """
    if not path.exists():
        raise NotFoundError(f"contamination file not found: {path}")
    rows = _rows(path)
    header = next(rows, None)
    if header is None:
        raise InputError(path, None, "empty file: expected a header with the columns "
                         "model, topic, score[, threshold]")
    line, names = header
    columns = [n.strip().lower() for n in names]
    missing = [c for c in COLUMNS if c not in columns]
    if missing:
        raise InputError(path, line, f"missing column(s) {', '.join(missing)} (header: "
                         f"{', '.join(names)}; expected model, topic, score[, threshold])")
    repeated = sorted({c for c in columns if c and columns.count(c) > 1})
    if repeated:
        raise InputError(path, line, f"column(s) named twice: {', '.join(repeated)}")
    at = {c: columns.index(c) for c in (*COLUMNS, "threshold") if c in columns}
    seen: dict[tuple[str, str], int] = {}
    out: list[Verdict] = []
    for line, fields in rows:
        if len(fields) < len(columns):
            raise InputError(path, line, f"{len(fields)} field(s), the header has "
                             f"{len(columns)}")
        model = fields[at["model"]].strip()
        topic = fields[at["topic"]].strip()
        if not model or not topic:
            raise InputError(path, line, "empty " + ("model" if not model else "topic"))
        try:  # a model is a name (its set's for_model, and part of the set's name)
            model = check_name(model)
        except BadName as exc:
            raise InputError(path, line, f"model: {exc}") from None
        score = _number(path, line, "score", fields[at["score"]])
        own = fields[at["threshold"]].strip() if "threshold" in at else ""
        if own:
            limit = _number(path, line, "threshold", own)
        elif threshold is not None:
            limit = threshold
        else:
            raise InputError(path, line, "no threshold: give the row one in a threshold "
                             "column, or --threshold for every row")
        if (model, topic) in seen:
            raise InputError(path, line, f"model {model!r} and topic {topic!r} listed twice "
                             f"(first at line {seen[(model, topic)]})")
        seen[(model, topic)] = line
        out.append(Verdict(line, model, topic, score, limit))
    if not out:
        raise InputError(path, None, "no rows below the header")
    return out


def _rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    """(line, fields) of the non-blank lines, as the csv module splits them (quotes honoured)."""
    from tcdb.collections.files.opening import read_input_text

    text = read_input_text(path)  # BOM dropped; a directory or pipe: files' rule
    lines = text.splitlines()
    first = next((s for s in lines if s.strip()), "")
    delimiter = delimiter_of(first, suffix=path.suffix)
    for number, fields in enumerate(csv.reader(lines, delimiter=delimiter), start=1):
        if any(f.strip() for f in fields):
            yield number, fields


def _number(path: Path, line: int, column: str, text: str) -> float:
    """A finite decimal, by the one number grammar of tcdb's readers (no `1_0`, `nan`)."""
    from tcdb.collections.files.numeric import parse_score
    from tcdb.limits import Refused

    try:
        return parse_score(text.strip(), column)
    except Refused as exc:
        raise InputError(path, line, str(exc)) from None


def set_name(model: str, prefix: str) -> str:
    """`<prefix>-<model>`, the model's spaces as dashes so the name is one shell word."""
    return made_name(prefix + "-" + re.sub(r"\s+", "-", model), "prefix")


class TopicSetImportRequest(Request):
    """Which contamination file to turn into topic sets, for which snapshot's topic ids."""

    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot whose topic ids the file uses.")
    file: Path = argument(help="TSV or CSV with a header: model, topic, score[, threshold].")
    threshold: float | None = option(None, help="Score at or above which a model has likely "
                                     "seen a topic, for rows without their own threshold.")
    prefix: Name = option("clean", help="Sets are named PREFIX-MODEL.")
    replace: bool = option(False, help="Replace sets of those names.")


class ImportedSet(TopicSetResult):
    """One model's set of unseen topics, and how many topics it has likely seen."""

    n_seen: int


class TopicSetImportResult(Result):
    """One topic set per model of a contamination file."""

    collection: str
    snapshot: str
    file: str
    threshold: float | None
    sets: list[ImportedSet]

    def to_frame(self) -> pd.DataFrame:
        """One row per set: name, for_model, status, n_topics (clean), n_seen, …"""
        import pandas as pd

        return pd.DataFrame([s.model_dump() for s in self.sets],
                            columns=list(ImportedSet.model_fields))


@operation("topic_set_import", command="topics set import", writes=True)
def topic_set_import(request: TopicSetImportRequest, db: Database) -> TopicSetImportResult:
    """One topic set per model of a contamination file: the topics it has likely NOT seen.

    All sets are written in one transaction (an error leaves none); the same file again
    changes nothing. Topic ids are SNAPSHOT's; one unknown to it is an error with its line.
    Why: a model's results are re-evaluated on the topics it has not seen (`report subset`).
    """
    from sqlmodel import col, select

    from tcdb.catalog.collections import get_collection, get_snapshot
    from tcdb.catalog.topic_sets import store_topic_set
    from tcdb.schema import SnapshotTopic

    collection, snapshot, path = request.collection, request.snapshot, Path(request.file)
    threshold, prefix, replace = request.threshold, request.prefix, request.replace
    if threshold is not None and not math.isfinite(threshold):
        raise FieldError("threshold", f"{threshold} is not a finite number")
    if not prefix.strip():
        raise FieldError("prefix", "give a non-empty prefix")
    verdicts = read_contamination(path, threshold)
    models = list(dict.fromkeys(v.model for v in verdicts))
    names: dict[str, str] = {}
    for model in models:
        name = set_name(model, prefix)
        if name in names:
            raise InputError(path, None, f"models {names[name]!r} and {model!r} would both "
                             f"be topic set {name!r}")
        names[name] = model
    with db.session() as session:
        coll = get_collection(session, collection)
        snap = get_snapshot(session, collection, snapshot)
        ids = dict(session.execute(select(col(SnapshotTopic.external_id),
                                          col(SnapshotTopic.topic_id))
                                   .where(col(SnapshotTopic.snapshot_id) == snap.id)).tuples()
                   .all())
        clean: dict[str, set[int]] = {m: set() for m in models}
        n_seen = dict.fromkeys(models, 0)
        for verdict in verdicts:
            if verdict.topic not in ids:
                raise InputError(path, verdict.line, f"topic {verdict.topic!r} is not in "
                                 f"snapshot {snapshot!r}")
            if verdict.seen:
                n_seen[verdict.model] += 1
            else:
                clean[verdict.model].add(ids[verdict.topic])
        default = f"{threshold:g}" if threshold is not None else "none"
        results = []
        for name, model in names.items():
            description = (f"topics {model} has likely not seen: contamination score below "
                           f"the threshold (row's own, else {default}) in {path.name} "
                           f"({snapshot})")
            result = store_topic_set(session, coll.pk, collection, name, clean[model],
                                     description=description, for_model=model, method=METHOD,
                                     replace=replace)
            results.append(ImportedSet(**result.model_dump(), n_seen=n_seen[model]))
        return TopicSetImportResult(collection=collection, snapshot=snapshot, file=str(path),
                                    threshold=threshold, sets=results)
