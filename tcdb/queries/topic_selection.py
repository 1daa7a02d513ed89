"""The topics a report averages over: `all` judged ones, `core` (in every compared snapshot and
judged in each), or a named topic set — one meaning of a report's `topics` everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlmodel import Session

from tcdb.errors import FieldError
from tcdb.queries.topics import core_topic_ids, snapshot_topics, topic_set_topic_ids
from tcdb.sorting import natural_key

if TYPE_CHECKING:
    from tcdb.schema import Snapshot


def topic_lists(session: Session, collection: str, judged: dict[str, dict[int, str]],
                 selection: str) -> dict[str, list[int]]:
    """Each snapshot's topic ids under the selection (all / core / a topic set name).

    `core`: topics present in every snapshot (`tcdb.catalog.topic_sets.core_topic_ids`) and
    judged in each one's qrels set, so every snapshot averages over the same topics.
    """
    chosen: dict[str, set[int]]
    if selection == "all":
        chosen = {label: set(ids) for label, ids in judged.items()}
    elif selection == "core":
        common = core_topic_ids(session, collection, list(judged))
        for ids in judged.values():
            common &= set(ids)
        chosen = dict.fromkeys(judged, common)
    else:
        members = topic_set_topic_ids(session, collection, selection)
        chosen = {label: set(ids) & members for label, ids in judged.items()}
    for label, members_of in chosen.items():
        if not members_of:
            what = "no judged topics" if selection == "all" else \
                f"no judged topics in the {selection!r} selection"
            raise FieldError("topics", f"snapshot {label!r} has {what}")
    return {label: sorted(ids) for label, ids in chosen.items()}


def select_topics(session: Session, collection: str, snapshot: Snapshot,
                  judged: Sequence[int], selection: str = "all") -> dict[int, str]:
    """topic id → external id of the topics a report on one snapshot averages over: the
    `judged` ones under the selection (all / core / a topic set name).

    Why persistence's resolution: one meaning of `topics` across reports. On one snapshot
    `core` (topics every compared snapshot has, judged in each) is the judged topics.
    """
    names = snapshot_topics(session.connection(), snapshot.pk)
    chosen = topic_lists(session, collection, {snapshot.label: dict.fromkeys(judged, "")},
                          selection)[snapshot.label]
    return {t: names[t][0] for t in sorted(chosen, key=lambda t: natural_key(names[t][0]))}
