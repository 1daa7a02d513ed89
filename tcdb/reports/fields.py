"""The `qrels` and `topics` fields every report and score request shares: one default, one
help text, one meaning.

Why: a user who learnt `--topics core` and an omitted `--qrels` in one report must find them
working the same in the next (reusability once required `--qrels` where persistence defaulted
it, and refused `--topics core`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BeforeValidator

from tcdb.operations.request import Name, Names, as_labels, option

QRELS_DEFAULT = "original"
QRELS_HELP = "Qrels set name (default: original)."
TOPICS_HELP = ("all, core (judged in every compared snapshot) or a topic set name (set:NAME "
               "for a set named all or core).")
WHOLE = ("all", "core")  # every judged topic; on one snapshot core is all of them
SET_PREFIX = "set:"  # `set:core` is the topic set named core, `core` the core topics


def qrels_option(**kwargs: Any) -> Any:
    """`qrels`: the set to score on, `original` unless named."""
    return option(QRELS_DEFAULT, help=QRELS_HELP, **kwargs)


def topics_option(default: Any = "all") -> Any:
    """`topics`: all (the default), core, or a topic set's name, resolved by
    `tcdb.queries.topic_selection.select_topics` / the persistence resolver. A report about a subset
    (`report subset`) passes `...`: there the selection is required."""
    return option(default, metavar="TOPICS", help=TOPICS_HELP)


ALPHA_DEFAULT = 0.05


def alpha_option(help: str = "Significance level.") -> Any:
    """`alpha`: a level strictly between 0 and 1 (0.05 unless given); anything else is a
    FieldError naming `alpha` before any work is done.

    Why one definition: compare, leaderboard and subset each validated it their own way."""
    return option(ALPHA_DEFAULT, help=help, gt=0, lt=1)


def topic_set_name(selection: str | None) -> str | None:
    """The topic set a selection names: None for `all` and `core` (every judged topic, on one
    snapshot and over the core topics two snapshots share alike), else the set's name.

    Why: `all` and `core` are always the selection words, so a selection means one thing
    everywhere; a topic set that is itself named `all` or `core` is `set:all` / `set:core`
    (`tcdb.queries.topics.get_topic_set` reads the prefix off).
    """
    if selection is None or selection in WHOLE:
        return None
    return selection.removeprefix(SET_PREFIX)


# A `topics` field of a request: `all`, `core` or a topic set's name, kept as given so the
# result echoes the selection the user made; resolved by
# `tcdb.queries.topic_selection.select_topics`. (A `TopicSet` is the table of named sets.)
TopicChoice = Name  # a name by tcdb.names' rule (`all`, `core` and `set:NAME` pass it)


def topic_set_option(default: Any = "all") -> Any:
    """`topics` for requests whose field is a `TopicChoice`: the same default and help as
    `topics_option`."""
    return topics_option(default)


ALL_QRELS = "all"  # every qrels set the compared snapshots share by name
QRELS_SETS_HELP = ("Qrels set name; repeat for several sets reported side by side, or all "
                   "(every set the snapshots share by name). SNAPSHOT=NAME, once per snapshot, "
                   "scores each snapshot on its own set (the API also takes a mapping snapshot → "
                   "name).")


def _qrels_sets(value: Any) -> Any:
    """`all`, one or more set names (de-duplicated, in order), or one set per snapshot
    (`SNAPSHOT=NAME` entries, or a mapping): what a report over snapshots scores on.

    Why one type: persistence and rankings both take it, and both once took a list whose
    meaning hung on its length (one name, or one per snapshot in order); a repeated name now
    always means another set side by side, and a per-snapshot choice says its snapshots.
    """
    if isinstance(value, Mapping):
        return dict(value)
    names = as_labels(value)
    if not isinstance(names, list):
        return names  # not text: the field's type refuses it, naming the field
    if not names:
        raise ValueError("give a qrels set name or all")
    paired = [n for n in names if isinstance(n, str) and "=" in n]
    if paired:
        if len(paired) != len(names):
            plain = next(n for n in names if n not in paired)
            raise ValueError(f"{plain!r} beside SNAPSHOT=NAME entries: give one set per "
                             "snapshot (SNAPSHOT=NAME each), or set names only")
        chosen: dict[str, str] = {}
        for entry in paired:
            snapshot, name = (part.strip() for part in entry.split("=", 1))
            if snapshot in chosen:
                raise ValueError(f"snapshot {snapshot!r} given two qrels sets")
            chosen[snapshot] = name
        return chosen
    names = list(dict.fromkeys(names))
    if ALL_QRELS in names and len(names) > 1:
        raise ValueError("all already names every shared qrels set: give all alone")
    return names


# A `qrels` field of a report over snapshots: `["all"]`, one or more set names (each scored on
# every snapshot, reported side by side; one name gives the one-set report), or a mapping
# snapshot → set name (one set per snapshot, reported as one). Resolved against the database
# by `tcdb.reports.persistence_sets.qrels_choices`.
QrelsSets = Annotated[Names | dict[Name, Name], BeforeValidator(_qrels_sets)]


def _qrels_per_snapshot(value: Any) -> Any:
    """`_qrels_sets` for a report that scores each snapshot on one set: a list names one set
    (every snapshot's); several sets side by side are the reports that take `QrelsSets`."""
    parsed = _qrels_sets(value)
    if isinstance(parsed, list) and (len(parsed) > 1 or ALL_QRELS in parsed):
        raise ValueError("one qrels set for every snapshot, or SNAPSHOT=NAME once per "
                         "snapshot (several sets side by side: report persistence or report "
                         "rankings)")
    return parsed


# A `qrels` field of a report that scores each snapshot on one set: one name for every
# snapshot, or one per snapshot (SNAPSHOT=NAME, or a mapping) — the same spelling as
# `QrelsSets`, so a list of names never means one thing here and another there.
QrelsPerSnapshot = Annotated[Names | dict[Name, Name], BeforeValidator(_qrels_per_snapshot)]
QRELS_PER_SNAPSHOT_HELP = ("Qrels set name, for every snapshot; SNAPSHOT=NAME, once per "
                           "snapshot, scores each snapshot on its own set (the API also takes "
                           "a mapping snapshot → name).")


def qrels_sets_option(**kwargs: Any) -> Any:
    """`qrels`: `original` unless named; repeat or `all` for several sets side by side."""
    return option([QRELS_DEFAULT], flag="--qrels", metavar="NAME|all",
                  help=QRELS_SETS_HELP, **kwargs)
