"""What the run operations take and give: the requests of `run_import`, `run_update` and
`run_delete` (the run files or tags, and the metadata a round's organiser gives: the same fields
for import and update) and their typed results.

Apart from the operations (`tcdb.runs.operations`) so that the core writers (`importing`,
`editing`) take the request without importing the operations that call them.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from tcdb.operations import Name, Request, Result, Version, argument, option
from tcdb.vocabulary import OnBadLines, RunCategory, RunType

if TYPE_CHECKING:
    import pandas as pd

    from tcdb.runs.metadata import RunMetadata

METADATA_HELP = ("A table of the round's runs (CSV, TSV or JSON): columns tag, system, group, "
                 "runtype, contributed, category, submitted, description, first_stage, "
                 "version. A row wins over the options.")


class RunMetadataFields(Request):
    """What a round's organiser says about runs; a field left None is not given (keeps what is
    stored, or the default for a new run)."""

    metadata: Path | None = option(None, metavar="FILE", help=METADATA_HELP)
    system: Name | None = option(None, help="System the runs belong to (default: each run's "
                                "tag).")
    group: Name | None = option(None, help="Participant group (team).")
    run_type: RunType | None = option(None, metavar="TYPE", help="automatic, manual or "
                                      "feedback.")
    contributed: bool | None = option(
        None, help="The runs fed the official pools (judged runs); --not-contributed: they "
        "did not.")
    category: RunCategory | None = option(None, metavar="KIND",
                                          help="Kind of system: lexical, neural, llm or other.")
    submitted: dt.date | None = option(None, flag="--date", metavar="YYYY-MM-DD",
                                       help="Submission date.")
    description: str | None = option(None, metavar="TEXT", help="Free text.")
    first_stage: Name | None = option(None, metavar="TAG",
                                     help="Tag of the run these runs re-rank.")

    def given_metadata(self) -> RunMetadata:
        """The options as `RunMetadata` (the table, `metadata`, is read by the core)."""
        from tcdb.runs.metadata import RunMetadata

        return RunMetadata(system=self.system, group=self.group, run_type=self.run_type,
                           contributed=self.contributed, category=self.category,
                           submitted=self.submitted, description=self.description,
                           first_stage=self.first_stage)


class _ImportTarget(Request):
    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot label.")
    files: list[Path] = argument(help="TREC run files (plain or .gz).")


class RunImportRequest(RunMetadataFields, _ImportTarget):
    """Run files into a snapshot, with what is known about them (the positional arguments,
    then the metadata: a base listed later comes first among the fields)."""

    ir_metadata: Path | None = option(
        None, metavar="FILE", help="The run's ir_metadata (PRIMAD YAML) when it is neither in "
        "the run file's header nor in a side file RUN.yaml beside it (one run file only).")
    replace: bool = option(False, help="Replace a stored run of the same tag from another file: "
                           "a resubmission, kept as the run's new version while the version it "
                           "replaces stays listed (`run versions`) and can still be scored "
                           "(`evaluate --version`); metadata not given again is kept.")
    version: Version | None = option(
        None, metavar="LABEL", help="The run files' version label (a resubmission's, e.g. the "
        "organisers' timestamp; a `version` column of --metadata gives each run its own); "
        "default: 1 for a new run, the next number for a replaced one.")
    allow_unknown_docs: bool = option(
        False, help="Keep entries for documents the snapshot lacks (as unresolved) instead of "
        "failing.")
    on_bad_lines: OnBadLines = option(
        OnBadLines.error, help="A line a run file's reader cannot read (too few columns, a bad "
        "id or score, a second tag, a repeated document): refuse the files (error), or set it "
        "aside in the rejects file and go on (warn, skip: counted per run either way).")
    rejects: Path | None = option(
        None, metavar="FILE", help="Where set-aside lines go (TSV: file, line, reason); "
        "default runs.rejects.tsv in the current folder.")


class ImportedRun(BaseModel):
    """What importing one run file did."""

    collection: str
    snapshot: str
    run: str  # the tag
    path: str
    status: str  # imported | unchanged | updated (metadata) | replaced (file)
    version: str  # the run's version now
    replaced_version: str | None = None  # the version a replaced file superseded (kept)
    run_id: int
    system: str
    n_entries: int
    n_unresolved: int
    n_rejected: int  # lines set aside (--on-bad-lines warn|skip)
    rejects_file: str | None
    seconds: float


class RunImportResult(Result):
    """Every file's run, and the metadata table's rows that named no run of these files."""

    runs: list[ImportedRun]
    metadata_unmatched: list[str]

    def to_frame(self) -> pd.DataFrame:
        """One row per run file."""
        import pandas as pd

        return pd.DataFrame([r.model_dump() for r in self.runs],
                            columns=list(ImportedRun.model_fields))


class RunChangeRow(BaseModel):
    """What an update or a delete did to one run."""

    collection: str
    snapshot: str
    run: str
    status: str  # updated | unchanged | deleted
    changed: list[str] = []  # the fields an update changed
    n_entries: int = 0  # entries deleted
    n_scores: int = 0  # scores deleted
    pools: list[str] = []  # pools a deleted run had contributed to (their documents stay)


class RunChangesResult(Result):
    """One change per run, in the order named."""

    changes: list[RunChangeRow]

    def to_frame(self) -> pd.DataFrame:
        """One row per run; `changed` and `pools` joined by commas."""
        import pandas as pd

        rows = [{**c.model_dump(), "changed": ", ".join(c.changed), "pools": ", ".join(c.pools)}
                for c in self.changes]
        return pd.DataFrame(rows, columns=list(RunChangeRow.model_fields))

    def to_data(self) -> list[dict[str, Any]]:
        """The list of changes, as `tcdb run update|delete --json` has always printed it."""
        changes: list[dict[str, Any]] = super().to_data()["changes"]
        return changes


class _UpdateTarget(Request):
    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot label.")
    tags: list[Name] = argument([], help="Run tags (default: the table's runs).")


class RunUpdateRequest(RunMetadataFields, _UpdateTarget):
    """Which stored runs to fix, and what to set."""


class RunDeleteRequest(Request):
    """Which stored runs to delete."""

    collection: Name = argument(help="Collection name.")
    snapshot: Name = argument(help="Snapshot label.")
    tags: list[Name] = argument(help="Run tags.")


