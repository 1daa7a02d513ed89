"""The `qrels` and `topics` fields every report and score request shares: one default, one
help text, one meaning.

Why: a user who learnt `--topics core` and an omitted `--qrels` in one report must find them
working the same in the next (reusability once required `--qrels` where persistence defaulted
it, and refused `--topics core`).
"""

from __future__ import annotations

from typing import Any

from tcdb.operations.request import Name, option

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
