"""Writing a stored run back out as a TREC run file, to release it beside its qrels.

Entries go per topic (natural order) in the order evaluation sees them (trec_eval's: score
descending, then document id descending); each keeps the rank and score it was submitted with,
and entries naming documents the snapshot lacks are written under their submitted ids, so the
file evaluates exactly as the one imported. A run imported with ir_metadata gets it back as the
file's header block (`# ir_metadata.start` … `# ir_metadata.end`), its YAML byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import text

from tcdb.catalog.collections import get_snapshot
from tcdb.collections.ir_metadata.description import header_block
from tcdb.operations import Database, Name, Request, Result, argument, operation, option
from tcdb.runs.listing import get_runs
from tcdb.sorting import natural_key

if TYPE_CHECKING:
    import pandas as pd


class RunExportRequest(Request):
    """Which stored run to write, and where."""

    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot label.")
    tag: Name = argument(help="The run's tag.")
    out: Path = option(help="File to write (.gz to compress).")


class RunExportResult(Result):
    """What was written where."""

    collection: str
    snapshot: str
    run: str
    out: str
    n_entries: int
    n_topics: int

    def to_frame(self) -> pd.DataFrame:
        """One row: the run and its file."""
        import pandas as pd

        return pd.DataFrame([self.model_dump()])


@operation("run_export", command="run export", writes=True)
def run_export(request: RunExportRequest, db: Database) -> RunExportResult:
    """Write a run back out as a TREC run file (ranks and scores as submitted), to release
    it beside `tcdb qrels export`. `.gz` compresses."""
    from tcdb.collections.files.opening import check_output
    from tcdb.collections.runs.trec import write_run

    collection, snapshot, tag, out = (request.collection, request.snapshot, request.tag,
                                      request.out)
    check_output(out)  # before any work: a directory, a missing folder, no permission
    with db.session() as session:
        snap = get_snapshot(session, collection, snapshot)
        (run,) = get_runs(session, snap, [tag])
        ir = (run.meta or {}).get("ir_metadata")
        conn = session.connection()
        params = {"r": run.pk, "s": snap.pk}
        rows = list(conn.execute(text(
            "SELECT st.external_id, sd.external_id, e.rank, e.score, e.eval_rank "
            "FROM run_entry e JOIN snapshot_topic st ON st.snapshot_id = :s "
            "AND st.topic_id = e.topic_id JOIN snapshot_document sd ON sd.snapshot_id = :s "
            "AND sd.document_id = e.document_id WHERE e.run_id = :r"), params).tuples().all())
        rows += conn.execute(text(
            "SELECT st.external_id, e.external_doc_id, e.rank, e.score, e.eval_rank "
            "FROM run_entry_unresolved e JOIN snapshot_topic st ON st.snapshot_id = :s "
            "AND st.topic_id = e.topic_id WHERE e.run_id = :r"), params).tuples().all()
    rows.sort(key=lambda r: (natural_key(r[0]), r[4]))
    entries = ((t, d, rank, score) for t, d, rank, score, _ in rows)
    if isinstance(ir, dict) and ir.get("yaml"):
        n = _write_with_header(out, entries, tag, header_block(str(ir["yaml"])))
    else:
        n = write_run(out, entries, tag)
    return RunExportResult(collection=collection, snapshot=snapshot, run=tag, out=str(out),
                           n_entries=n, n_topics=len({r[0] for r in rows}))


def _write_with_header(out: Path, entries: Iterable[tuple[str, str, int, float]], tag: str,
                       header: str) -> int:
    """`write_run`'s file with `header` before its first line (through a plain file in a
    temporary folder, so `write_run` stays the one writer of run lines)."""
    import tempfile

    from tcdb.collections.files.compression import write_text
    from tcdb.collections.runs.trec import write_run

    # not beside `out`: its folder may be /dev (`--out /dev/stdout`); write_text writes `out`
    with tempfile.TemporaryDirectory(prefix=".tcdb-export-") as folder:
        body = Path(folder) / "run"
        n = write_run(body, entries, tag)
        write_text(out, header + body.read_text(encoding="utf-8"), compresslevel=6)
    return n
