"""Reading an organiser's results table (CSV or TSV): one row per team × run × snapshot, one
column per measure, each cell the run's aggregate (LongEval publishes ~70 ir_measures ones).

The header names the columns. The team, run and snapshot columns, and a version column when
the table has one (a resubmitted run: LongEval 2025 gives each submission's timestamp), are
found by their usual names (or named by the caller); every other column must be a measure
ir_measures parses, in any case (`ndcg@10`, `P_10`, `map` → nDCG@10, P@10, AP), or be named
to be left out. An empty cell (or `-`, `NA`) is a figure the table does not give: counted, not
stored; an empty team is a run of no known group (a system without a group, as `run import`
makes one). Every problem is an `InputError` naming the file, the line and the reason, found
before anything is written.
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tcdb.collections.files.bad_lines import BadLines, one_line
from tcdb.collections.files.numeric import parse_score
from tcdb.collections.sources.records import Rejected, delimiter_of
from tcdb.errors import FieldError, InputError, NotFoundError
from tcdb.limits import Refused

# The names each identity column goes by in published tables (compared case-folded, with
# spaces and dashes as underscores).
TEAM_NAMES = ("team", "group", "participant", "team_name", "group_name")
RUN_NAMES = ("run", "run_id", "run_name", "runid", "tag", "run_tag", "system")
# `version` names the snapshot only in a table with no other snapshot column (LongEval 2023);
# beside a snapshot column it is the submission's version (LongEval 2025's timestamps).
SNAPSHOT_NAMES = ("snapshot", "sub_collection", "subcollection", "dataset", "lag", "version")
VERSION_NAMES = ("version", "run_version", "submission", "submitted", "timestamp")
IDENTITY = ("team", "run", "snapshot", "version")  # the columns that say whose figure it is
NO_VALUE = frozenset({"", "-", "–", "na", "n/a", "nan", "none", "null"})


@dataclass(frozen=True)
class PublishedRow:
    """One line of the table: whose run, which version of it, on which snapshot, and its figures
    by measure."""

    line: int
    team: str  # "" when the table has no team column
    run: str
    snapshot: str
    values: dict[str, float]
    version: str = ""  # "" when the table has no version column


@dataclass
class PublishedTable:
    """A results table read and checked: its rows, measures (canonical, in column order), the
    column each measure came from, the empty cells, and the file's sha256."""

    path: Path
    rows: list[PublishedRow]
    measures: list[str]
    columns: dict[str, str]  # measure → the column name as the file writes it
    checksum: str
    n_missing: int = 0
    ignored: list[str] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)  # rows set aside (--on-bad-lines)

    @property
    def n_values(self) -> int:
        return sum(len(r.values) for r in self.rows)


def _folded(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(" ", "_")


def read_results_table(path: Path | str, *, snapshot_column: str | None = None,
                       team_column: str | None = None, run_column: str | None = None,
                       version_column: str | None = None, ignore_columns: Sequence[str] = (),
                       bad: BadLines | None = None) -> PublishedTable:
    """Every row of a results table, checked; an InputError at the first bad one, or under
    `bad` that keeps going (`--on-bad-lines warn|skip`) the bad rows set aside
    (`PublishedTable.rejected`). A bad header is always an error."""
    path = Path(path)
    if not path.exists():
        raise NotFoundError(f"results table not found: {path}")
    from tcdb.collections.files.opening import read_input

    _, raw = read_input(path)  # a directory, a pipe, gzip/bz2/xz: files.open_input's rule
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise InputError(path, line, "not UTF-8 text (save the file as UTF-8)") from None
    first = next((line for line in text.splitlines() if line.strip()), "")
    delimiter = delimiter_of(first, suffix=path.suffix)
    records = _records(path, text, delimiter)
    if not records:
        raise InputError(path, None, "the file is empty: the first line names the columns "
                         "(team, run, snapshot and one column per measure)")
    header_line, header = records[0]
    roles = _roles(path, header_line, header, {"snapshot": snapshot_column, "team": team_column,
                                               "run": run_column, "version": version_column},
                   ignore_columns)
    table = PublishedTable(path, [], [], {}, hashlib.sha256(raw).hexdigest(),
                           ignored=[h for h, r in zip(header, roles, strict=True) if r is None])
    for name, role in zip(header, roles, strict=True):
        if role is not None and role not in IDENTITY:
            table.measures.append(role)
            table.columns[role] = name
    seen: dict[tuple[str, str, str, str], int] = {}
    for line, cells in records[1:]:
        with one_line(bad):
            if len(cells) != len(header):
                raise InputError(path, line, f"{len(cells)} fields, the header has "
                                 f"{len(header)} (a field with a {delimiter!r} inside needs "
                                 "double quotes)")
            row = _row(path, line, header, roles, cells, table)
            key = (row.team, row.run, row.snapshot, row.version)
            if key in seen:
                who = f"{row.team}/{row.run}" if row.team else row.run
                which = f" (version {row.version!r})" if row.version else ""
                raise InputError(path, line, f"run {who!r}{which} on snapshot {row.snapshot!r} "
                                 f"is already on line {seen[key]}")
            seen[key] = line
            table.rows.append(row)
    if bad is not None:
        table.rejected = list(bad.rejected)
    if not table.rows:
        raise InputError(path, None, "no rows below the header")
    return table


def _records(path: Path, text: str, delimiter: str) -> list[tuple[int, list[str]]]:
    """(first line, cells) per non-blank record, the header first."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    out: list[tuple[int, list[str]]] = []
    end = 0
    try:
        for cells in reader:
            start, end = end + 1, reader.line_num
            if any(c.strip() for c in cells):
                out.append((start, cells))
    except csv.Error as exc:
        raise InputError(path, reader.line_num, f"not valid CSV: {exc}") from None
    return out


def _roles(path: Path, line: int, header: list[str], named: dict[str, str | None],
           ignore: Sequence[str]) -> list[str | None]:
    """Per column: team, run, snapshot, version, a canonical measure name, or None (left out);
    `named` gives each identity's column where the caller named it."""
    from tcdb.scoring.measures import canonical_measure

    folded = [_folded(h) for h in header]
    repeated = sorted({h for h in folded if folded.count(h) > 1})
    if repeated:
        raise InputError(path, line, f"column {repeated[0]!r} appears twice in the header")
    roles: list[str | None] = [None] * len(header)
    for role, usual in (("snapshot", SNAPSHOT_NAMES), ("team", TEAM_NAMES), ("run", RUN_NAMES),
                        ("version", VERSION_NAMES)):
        given = named.get(role)
        if given is not None:
            if _folded(given) not in folded:
                raise FieldError(f"{role}_column", f"{path} has no column {given!r} "
                                 f"(columns: {', '.join(header)})")
            index = folded.index(_folded(given))
        else:
            index = next((folded.index(n) for n in usual if n in folded
                          and roles[folded.index(n)] is None), -1)
            if index < 0:
                if role in ("team", "version"):
                    continue  # one group's runs (no groups), or runs never resubmitted
                hint = f"--{role}-column NAME" if role != "run" else "--run-column NAME"
                raise InputError(path, line, f"no {role} column (looked for "
                                 f"{', '.join(usual)}): name it with {hint}")
        roles[index] = role
    left_out = {_folded(n) for n in ignore}
    unknown_ignored = sorted(left_out - set(folded))
    if unknown_ignored:
        raise FieldError("ignore_columns", f"{path} has no column {unknown_ignored[0]!r} "
                         f"(columns: {', '.join(header)})")
    from_column: dict[str, str] = {}
    for i, name in enumerate(header):
        if roles[i] is not None or folded[i] in left_out:
            continue
        try:
            measure = canonical_measure(name, "measure")
        except FieldError as exc:
            raise InputError(path, line, f"column {name!r} is not team, run, snapshot, "
                             f"version nor a measure: {exc.reason} — leave it out with "
                             f"--ignore-column {name!r}") from None
        if measure in from_column:
            raise InputError(path, line, f"columns {from_column[measure]!r} and {name!r} are "
                             f"both {measure}")
        from_column[measure] = name
        roles[i] = measure
    if not from_column:
        raise InputError(path, line, "no measure column (e.g. nDCG@10, P@10, AP)")
    return roles


def _row(path: Path, line: int, header: list[str], roles: list[str | None], cells: list[str],
         table: PublishedTable) -> PublishedRow:
    from tcdb.analysis.means import sums_over_topics
    from tcdb.names import BadName, check_name, check_version

    ids: dict[str, str] = {}
    values: dict[str, float] = {}
    missing = 0  # counted on the table only when the row is kept
    for name, role, cell in zip(header, roles, cells, strict=True):
        if role is None:
            continue
        if role in ("team", "version") and not cell.strip():
            ids[role] = ""  # a run of no known group (an organiser's baseline), or no version
            continue
        if role in IDENTITY:
            try:
                ids[role] = (check_version if role == "version" else check_name)(cell)
            except BadName as exc:
                raise InputError(path, line, f"{role} {cell!r}: {exc}") from None
            continue
        text = cell.strip()
        if text.lower() in NO_VALUE:
            missing += 1
            continue
        try:  # the one number grammar of tcdb's readers (no `1_0`, `nan`)
            value = parse_score(text, f"column {name!r}:")
        except Refused as exc:
            raise InputError(path, line, str(exc)) from None
        if value < 0 or (value > 1 and not sums_over_topics(role)):
            bound = "at least 0" if sums_over_topics(role) else "between 0 and 1"
            raise InputError(path, line, f"column {name!r}: {role} is {bound}, not {text}")
        values[role] = value
    table.n_missing += missing
    return PublishedRow(line, ids.get("team", ""), ids["run"], ids["snapshot"], values,
                        ids.get("version", ""))
