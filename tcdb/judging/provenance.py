"""Who judged a qrels set, kept beside it: the judge kind on `qrels_set`, an LLM's model,
prompt and settings in `qrels_provenance`, each raw answer in `judgment_answer`.

The one rule for answers that did not parse: a (topic, document) none of whose answers parsed
is not a judgment. It leaves `judgment` — whatever grade the qrels file gave it, which is the
tool's stand-in (UMBRELA and LongEval 2026's judge write 0) — and is counted
(`qrels_provenance.n_unparsed`); its answers stay in `judgment_answer`. Scoring reads
`judgment` only, so it never sees such a pair, as ir_measures would not on qrels without it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlmodel import Session, col, select

from tcdb.collections.qrels.provenance import (
    Answer,
    Provenance,
    read_answers,
    read_sidecar,
    umbrela_provenance,
)
from tcdb.collections.sources.records import QrelRecord
from tcdb.errors import FieldError, InputError
from tcdb.schema import JudgeKind, QrelsProvenance, QrelsSet
from tcdb.storage.bulk import bulk_insert

ANSWER_COLUMNS = ("qrels_set_id", "topic_id", "doc_id", "sample", "answer", "parsed", "grade",
                  "input_tokens", "output_tokens", "cost")


def read_judge(qrels_file: Path, judge_kind: JudgeKind | str | None, sidecar: Path | None,
               answers: Path | None, umbrela: bool, judge_input: Path | None = None
               ) -> tuple[Provenance | None, list[Answer]]:
    """The provenance an import gives (UMBRELA's file name, then the sidecar, then the
    request's judge kind, which must agree) and its answers, read before anything is written."""
    provenance = umbrela_provenance(qrels_file) if umbrela else None
    if sidecar is not None:
        given = read_sidecar(sidecar)
        if provenance is not None:
            given = _merged(provenance, given)
        provenance = given
        provenance.values["source"] = str(Path(sidecar).resolve())
    if judge_kind is not None:
        kind = JudgeKind(judge_kind)
        if provenance is not None and provenance.judge_kind != kind:
            what = "the sidecar" if sidecar is not None else "an UMBRELA file"
            raise FieldError("judge_kind", f"{kind.value}, but {what} says "
                             f"{provenance.judge_kind}")
        provenance = provenance or Provenance(kind.value)
    if judge_input is not None and answers is None:
        raise FieldError("judge_input", "the judge input pairs answers with their topic and "
                         "document: give the answers too")
    read = read_answers(answers, judge_input) if answers is not None else []
    if read:
        if provenance is None:
            raise FieldError("answers", "answers are a judge's: give judge_kind or a "
                             "provenance sidecar too")
        where = str(Path(answers).resolve()) if answers is not None else ""
        source = provenance.values.get("source")
        provenance.values["source"] = f"{source}\n{where}" if source else where
    return provenance, read


def _merged(from_name: Provenance, sidecar: Provenance) -> Provenance:
    """The sidecar completes what an UMBRELA file name says; it may not contradict it."""
    assert sidecar.document is not None
    if sidecar.judge_kind != from_name.judge_kind:
        raise sidecar.document.fail(("judge_kind",), f"judge_kind {sidecar.judge_kind}, but "
                                    "an UMBRELA file is an LLM's")
    values = dict(from_name.values)
    for key, value in sidecar.values.items():
        if key in values and values[key] != value:
            raise sidecar.document.fail((key,), f"{key} {value!r}, but the UMBRELA file name "
                                        f"says {values[key]!r}")
        values[key] = value
    return Provenance(sidecar.judge_kind, values, sidecar.document)


def unparsed_pairs(answers: Sequence[Answer]) -> set[tuple[str, str]]:
    """(topic, document) pairs none of whose answers parsed."""
    parsed = {(a.topic_id, a.doc_id) for a in answers if a.parsed}
    return {(a.topic_id, a.doc_id) for a in answers} - parsed


def without_unparsed(records: list[QrelRecord], unparsed: set[tuple[str, str]]
                     ) -> list[QrelRecord]:
    """The judgments, less those of pairs no answer parsed for (the module's rule)."""
    return [r for r in records if (r.topic_id, r.doc_id) not in unparsed]


def store_provenance(session: Session, qrels: QrelsSet, provenance: Provenance,
                     answers: Sequence[Answer], topics: dict[str, int]) -> None:
    """Write a new set's provenance row and its answers (bulk), in the caller's transaction."""
    rows: list[tuple[Any, ...]] = []
    samples: dict[tuple[str, str], int] = {}
    lines: dict[tuple[str, str, int], int] = {}
    for answer in answers:
        topic = topics.get(answer.topic_id)
        if topic is None:
            raise InputError(answer.file, answer.line, f"topic {answer.topic_id!r} is not in "
                             f"the snapshot of qrels set {qrels.name!r}")
        pair = (answer.topic_id, answer.doc_id)
        sample = answer.sample if answer.sample is not None else samples.get(pair, 0)
        samples[pair] = max(samples.get(pair, 0), sample + 1)
        key = (*pair, sample)
        if key in lines:
            raise InputError(answer.file, answer.line, f"answer {sample} of document "
                             f"{answer.doc_id!r} for topic {answer.topic_id!r} is given twice "
                             f"(first on line {lines[key]})")
        lines[key] = answer.line
        rows.append((qrels.pk, topic, answer.doc_id, sample, answer.answer, answer.parsed,
                     answer.grade, answer.input_tokens, answer.output_tokens, answer.cost))
    session.add(QrelsProvenance(qrels_set_id=qrels.pk, n_unparsed=len(unparsed_pairs(answers)),
                                **provenance.values))
    session.flush()
    bulk_insert(session, "judgment_answer", ANSWER_COLUMNS, rows)


def provenance_of(session: Session, qrels_set_ids: Sequence[int]
                  ) -> dict[int, QrelsProvenance]:
    """The provenance rows of these sets (sets without one are absent)."""
    if not qrels_set_ids:
        return {}
    found = session.exec(select(QrelsProvenance).where(
        col(QrelsProvenance.qrels_set_id).in_(list(qrels_set_ids)))).all()
    return {p.qrels_set_id: p for p in found}


def inherited_kind(session: Session, *parent_ids: int | None) -> JudgeKind:
    """A set made from stored sets (expanded, derived) was judged by whoever judged them, when
    they agree; `other` when they do not (people and an LLM mixed)."""
    kinds = {session.get(QrelsSet, pk).judge_kind  # type: ignore[union-attr]
             for pk in parent_ids if pk is not None and session.get(QrelsSet, pk) is not None}
    if not kinds:
        return JudgeKind.unknown
    return kinds.pop() if len(kinds) == 1 else JudgeKind.other
