"""The `qrels` and `topics` fields every report and score request shares: one default, one
help text, one meaning.

Why: a user who learnt `--topics core` and an omitted `--qrels` in one report must find them
working the same in the next (reusability once required `--qrels` where persistence defaulted
it, and refused `--topics core`).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator

from tcdb.operations.request import option

QRELS_DEFAULT = "original"
QRELS_HELP = "Qrels set name (default: original)."
TOPICS_HELP = "all, core (judged in every compared snapshot) or a topic set name."
WHOLE = ("all", "core")  # every judged topic; on one snapshot core is all of them


def qrels_option(**kwargs: Any) -> Any:
    """`qrels`: the set to score on, `original` unless named."""
    return option(QRELS_DEFAULT, help=QRELS_HELP, **kwargs)


def topics_option() -> Any:
    """`topics`: all (the default), core, or a topic set's name, resolved by
    `tcdb.reports.common.select_topics` / the persistence resolver."""
    return option("all", metavar="TOPICS", help=TOPICS_HELP)


def _set_or_whole(value: Any) -> Any:
    """`all` and `core` as None (no topic set: every judged topic), a set's name as it is."""
    return None if isinstance(value, str) and value in WHOLE else value


# A `topics` field of a request that reads a topic set's name (None: no restriction), taking
# `all` and `core` too: on one snapshot, and over the core topics two snapshots share, both
# are every topic the report already averages over.
TopicSet = Annotated[str | None, BeforeValidator(_set_or_whole)]


def topic_set_option() -> Any:
    """`topics` for requests whose field is a `TopicSet`: the same help as `topics_option`."""
    return option(None, metavar="TOPICS", help=TOPICS_HELP)
