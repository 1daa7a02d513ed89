"""A run file's entries made ready and written: topics and documents resolved to the
snapshot's ids, every row ranked as trec_eval ranks it (`eval_rank`), then `run_entry` (and
`run_entry_unresolved` for documents the snapshot lacks) written in the key's order. Separate
from `tcdb.runs.importing`, which decides what to import (checksums, tags, metadata, locks).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlmodel import Session

from tcdb.collections.sources.records import Rejected
from tcdb.errors import InputError
from tcdb.names import BadName, check_name
from tcdb.runs.id_index import IdIndex
from tcdb.runs.trec_eval_order import trec_eval_order
from tcdb.storage.bulk import bulk_insert, bulk_insert_columns

if TYPE_CHECKING:
    from tcdb.collections.runs.trec import RunFile

UNRESOLVED_COLUMNS = ["run_id", "topic_id", "external_doc_id", "rank", "eval_rank", "score"]


@dataclass(eq=False)
class PreparedRun:
    """A parsed run file with its rows resolved to ids and ranked as trec_eval ranks them.

    Only what the writer needs: arrays, and strings only for the rows the snapshot lacks. The
    parsed file's per-row strings go as soon as the run is ranked, so the runs read ahead hold
    no string per row (less memory, less for the garbage collector to walk: 3 % faster).
    """

    tag: str
    checksum: str
    n_rows: int
    topic_ids: Any  # int64 per row
    doc_ids: Any  # int64 per row; -1 for a document the snapshot does not have
    ranks: Any  # int64 per row, the file's rank column
    scores: Any  # float64 per row
    eval_ranks: Any  # int64 per row, see trec_eval_order
    order: Any  # rows in run_entry's key order (topic id, eval_rank)
    missing: list[int]  # rows whose document the snapshot does not have
    missing_docs: list[str]  # and those documents' ids, row by row
    rejected: list[Rejected] = field(default_factory=list)  # lines set aside (--on-bad-lines)


def _run_tag(run_file: RunFile) -> str:
    """The file's run tag by the rule every name follows (`tcdb.names`), in NFC; a tag that
    breaks it is refused naming the file and its first line (the tag is the same on all)."""
    try:
        return check_name(run_file.tag)
    except BadName as exc:
        line = int(run_file.lines[0]) if len(run_file) else None
        raise InputError(run_file.path, line, f"run tag: {exc}") from None


def normal_form_hint(name: str, known: IdIndex) -> str:
    """What to add to "not in snapshot" when the snapshot has the id in another Unicode normal
    form (`café` as e + combining accent against the precomposed é): the same text to a
    reader, other bytes to a database; ids are compared as given, never normalised silently."""
    import unicodedata

    for form in ("NFC", "NFD", "NFKC"):
        other = unicodedata.normalize(form, name)
        if other != name and (known.lookup([other])[1] >= 0).all():
            return (f"; the snapshot has {other!r}, the same text in Unicode normal form "
                    f"{form}: write the file's ids in {form} (e.g. with Python's "
                    "unicodedata.normalize)")
    return ""


def prepare_run(run_file: RunFile, label: str, topics: IdIndex, docs: IdIndex,
             allow_unknown_docs: bool) -> PreparedRun:
    """Resolve a run's topics and documents (every topic must be in the snapshot; every
    document too unless `allow_unknown_docs`) and rank its rows in trec_eval's order."""
    import numpy as np

    tag = _run_tag(run_file)

    codes, names = run_file.topic_codes()
    name_ids, name_positions = topics.lookup(names)
    if (name_positions < 0).any():
        unknown = [n for n, p in zip(names, name_positions, strict=True) if p < 0]
        index = int(np.argmax(name_positions[codes] < 0))
        raise InputError(run_file.path, int(run_file.lines[index]),
                         f"topic {run_file.topics[index]!r} is not in snapshot {label!r} "
                         f"({len(unknown)} unknown topic(s) in the file)"
                         + normal_form_hint(run_file.topics[index], topics))
    topic_col = name_ids[codes]
    doc_col, doc_positions = docs.lookup(run_file.docs)
    missing: list[int] = np.flatnonzero(doc_positions < 0).tolist()
    if missing and not allow_unknown_docs:
        index = missing[0]
        raise InputError(run_file.path, int(run_file.lines[index]),
                         f"document {run_file.docs[index]!r} (topic {run_file.topics[index]!r}) "
                         f"is not in snapshot {label!r} ({len(missing)} unknown document "
                         "row(s); --allow-unknown-docs keeps them as unresolved)"
                         + normal_form_hint(run_file.docs[index], docs))
    # Documents the snapshot lacks have no place in its byte order: compare their strings.
    order_keys = run_file.docs if missing else docs.byte_order(doc_positions)
    order, eval_ranks = trec_eval_order(topic_col, order_keys, run_file.scores)
    return PreparedRun(tag, run_file.checksum, len(run_file), topic_col, doc_col,
                       run_file.ranks, run_file.scores, eval_ranks, order, missing,
                       [run_file.docs[i] for i in missing], run_file.rejected)


def write_entries(session: Session, run_id: int, run: PreparedRun) -> None:
    """Resolved entries to `run_entry`, unknown documents to `run_entry_unresolved`, each with
    its rank in trec_eval's order (`eval_rank`).

    Entries go in key order (topic id, eval_rank): every insert lands on the right edge of the
    primary key's index, PostgreSQL's fast path.
    """
    import numpy as np

    topic_col, doc_col, eval_ranks = run.topic_ids, run.doc_ids, run.eval_ranks
    ranks, scores, order = run.ranks, run.scores, run.order
    if run.missing:
        bulk_insert(session, "run_entry_unresolved", UNRESOLVED_COLUMNS,
                    [(run_id, int(topic_col[i]), doc, int(ranks[i]), int(eval_ranks[i]),
                      float(scores[i])) for i, doc in zip(run.missing, run.missing_docs,
                                                          strict=True)])
        order = order[doc_col[order] >= 0]
    bulk_insert_columns(session, "run_entry", {
        "run_id": np.full(len(order), run_id), "topic_id": topic_col[order],
        "eval_rank": eval_ranks[order], "document_id": doc_col[order], "rank": ranks[order],
        "score": scores[order]})
