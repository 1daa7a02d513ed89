"""Per-topic scores as a tidy table: one row per run, topic and measure (`run, topic, measure,
value`), comma-, tab- or semicolon-separated, with that header.

What a researcher keeps when the scores of several systems come from a paper's appendix or an
organiser's spreadsheet: one file for every run. Read exactly as written — a cell is data,
nothing is unquoted or neutralised (a tag `'=x` stays `'=x`) — and validated whole before
anything is stored: every row has the four cells, a run and a topic, a measure ir_measures
names (or trec_eval's name for it: `map`, `ndcg_cut_10`), a finite number in trec_eval's
grammar, a run tag that is a name (`tcdb.names`), a topic id within `tcdb.limits`, and no
(run, topic, measure) twice. The topic `all` is an aggregate, kept apart from the per-topic rows.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

from tcdb.collections.files.lines import text_lines
from tcdb.collections.files.numeric import parse_score
from tcdb.collections.runs.trec import read_text
from tcdb.collections.scores.trec_eval import (
    AGGREGATE_TOPIC,
    canonical_measure,
    measure_from_trec_name,
)
from tcdb.collections.sources.records import SEPARATORS, delimiter_of
from tcdb.errors import InputError
from tcdb.limits import TOPIC_ID_LENGTH, Refused, check_identifier, shown
from tcdb.names import BadName, check_name

COLUMNS = ("run", "topic", "measure", "value")


@dataclass(slots=True)
class TidyScores:
    """One run's rows of a tidy table: (measure, topic, value), the `all` rows apart, and the
    line each (measure, topic) came from (errors found later name it)."""

    per_topic: list[tuple[str, str, float]] = field(default_factory=list)
    aggregate: dict[str, float] = field(default_factory=dict)
    lines: dict[tuple[str, str], int] = field(default_factory=dict)


def is_tidy(path: Path) -> bool:
    """Whether a scores file is meant as a tidy table: its first line names two or more of
    the four columns (then `read_tidy_scores` says which one is missing); evaluation output
    never does."""
    text = read_text(Path(path))
    header = next((line for line in text_lines(text) if line.strip()), "")
    return any(len(set(COLUMNS) & {cell.strip().strip('"').lower()
                                    for cell in header.rstrip("\r").split(separator)}) >= 2
               for separator in SEPARATORS)


def _columns(header: str) -> tuple[str, list[str]] | None:
    """(separator, column names) of a header naming the four columns, else None."""
    separator = delimiter_of(header, columns=COLUMNS)
    names = [cell.strip().strip('"').lower() for cell in header.rstrip("\r").split(separator)]
    return (separator, names) if set(COLUMNS) <= set(names) else None


def read_tidy_scores(path: Path) -> dict[str, TidyScores]:
    """run → its scores, in the order runs first appear (see the module docstring)."""
    path = Path(path)
    text = read_text(path)
    lines = text_lines(text)
    start = next((i for i, line in enumerate(lines) if line.strip()), None)
    if start is None:
        raise InputError(path, None, "scores table has no rows")
    found = _columns(lines[start])
    if found is None:
        raise InputError(path, start + 1, f"expected the header {', '.join(COLUMNS)}")
    separator, names = found
    extra = [n for n in names if n not in COLUMNS]
    if extra or len(names) != len(set(names)):
        raise InputError(path, start + 1, "expected exactly the columns "
                         f"{', '.join(COLUMNS)}; found {', '.join(names)}")
    where = {name: names.index(name) for name in COLUMNS}
    runs: dict[str, TidyScores] = {}
    seen: dict[tuple[str, str, str], int] = {}
    reader = csv.reader(io.StringIO("\n".join(lines[start + 1:])), delimiter=separator)
    for offset, cells in enumerate(reader):
        number = start + 2 + offset
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(names):
            raise InputError(path, number, f"expected {len(names)} cells, found {len(cells)}")
        run, topic, raw, value_text = (cells[where[name]] for name in COLUMNS)
        run, topic, raw = run.strip(), topic.strip(), raw.strip()
        if not run or not topic:
            raise InputError(path, number, f"empty {'run' if not run else 'topic'}")
        measure = canonical_measure(raw) or measure_from_trec_name(raw)
        if measure is None:
            raise InputError(path, number, f"unknown measure {shown(raw)} (an ir_measures name "
                             "such as nDCG@10, or trec_eval's, such as ndcg_cut_10)")
        try:
            run = check_name(run)
            check_identifier(topic, "topic id", TOPIC_ID_LENGTH)
            value = parse_score(value_text.strip(), "value")
        except (Refused, BadName) as exc:
            raise InputError(path, number, f"{exc} (run {shown(run)}, {raw}, topic "
                             f"{shown(topic)})") from None
        first = seen.setdefault((run, topic, measure), number)
        if first != number:
            raise InputError(path, number, f"{measure} of run {run!r} for topic {topic!r} "
                             f"appears twice (first on line {first})")
        scores = runs.setdefault(run, TidyScores())
        if topic == AGGREGATE_TOPIC:
            scores.aggregate[measure] = value
        else:
            scores.per_topic.append((measure, topic, value))
            scores.lines[(measure, topic)] = number
    if not any(s.per_topic for s in runs.values()):
        raise InputError(path, None, "no per-topic scores (only `all` rows or none)")
    return runs
