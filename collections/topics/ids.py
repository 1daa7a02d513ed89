"""A snapshot's topics as a file of topic ids, with or without their texts.

Published scores often come with the topic ids alone (the texts are elsewhere, or under
licence); a snapshot registered from them keeps each topic by its id, without text. A file
whose lines are one field each (no tab, not XML or JSON) is such a list, one id a line (a
header `id`, `qid`, `query_id`, `topic` or `topic_id` is skipped); any other file is a topics
file of a shape `tcdb.collections.topics.formats.read_topics` reads, texts included.
"""

from __future__ import annotations

from pathlib import Path

from tcdb.collections.files.lines import text_lines
from tcdb.collections.runs.trec import read_text
from tcdb.collections.sources.records import TopicRecord
from tcdb.collections.topics.formats import read_topics
from tcdb.errors import InputError

_HEADERS = {"id", "qid", "query_id", "query-id", "topic", "topic_id"}


def read_topics_or_ids(path: Path) -> list[TopicRecord]:
    """The topics of a topics file, or of a list of ids (records with an empty query)."""
    path = Path(path)
    lines = [(number, line.strip()) for number, line in
             enumerate(text_lines(read_text(path)), start=1) if line.strip()]
    if not lines:
        raise InputError(path, None, "topics file has no topics")
    first = lines[0][1]
    if first.startswith(("<", "{")) or any("\t" in line for _, line in lines):
        return list(read_topics(path))
    if first.lower() in _HEADERS:
        lines = lines[1:]
    records: list[TopicRecord] = []
    seen: dict[str, int] = {}
    for number, line in lines:
        if len(line.split()) != 1:
            raise InputError(path, number, "expected one topic id a line (or `id<TAB>query`)")
        if line in seen:
            raise InputError(path, number, f"duplicate topic id {line!r} (first on line "
                             f"{seen[line]})")
        seen[line] = number
        records.append(TopicRecord(line, ""))
    if not records:
        raise InputError(path, None, "topics file has no topics")
    return records
