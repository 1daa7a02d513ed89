"""Topic files in the four shapes the field ships them, told apart by content, not by name.

* classic TREC (`<top> <num> Number: 301 <title> … <desc> Description: … <narr> …`, tags left
  unclosed) — read with the same rules as `ir_datasets.formats.TrecQueries`, so a topic reads
  the same whether it comes from a local file or from ir_datasets;
* XML (`<topics><topic number="1"><query>…</query><question>…</question><narrative>…`), the
  TREC-COVID / Web-track flavour;
* TSV `id<TAB>query` (LongEval queries files);
* BEIR `queries.jsonl` (`_id`, `text`, optional `metadata`).

Every shape is held to the same rules (`tcdb.limits`): a topic id is one word of at most 200
characters without control characters, refused with file and line otherwise; the query,
description, narrative and other fields are free text, whose control characters that are not
whitespace (NUL among them) are removed at read.

Also `normalise_query`, the key that matches LongEval's re-numbered queries across snapshots,
and `match_key`, which applies a collection's rule (normalised, or exact text).
"""

from __future__ import annotations

import json
import re
import unicodedata
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from tcdb.collections.files.bad_lines import BadLines, one_line
from tcdb.collections.files.lines import text_lines
from tcdb.collections.runs.trec import read_text
from tcdb.collections.sources.records import TopicRecord, is_json_id
from tcdb.errors import InputError
from tcdb.limits import TOPIC_ID_LENGTH, Refused, check_identifier, clean_text

# The tag patterns and order of ir_datasets' DEFAULT_QTYPE_MAP; our names for the fields.
_TREC_TAGS = (
    (re.compile(r"<num> *(Number:)?"), "topic_id"),
    (re.compile(r"<title> *(Topic:)?"), "query"),
    (re.compile(r"<desc> *(Description:)?"), "description"),
    (re.compile(r"<narr> *(Narrative:)?"), "narrative"),
)
_XML_QUERY = ("query", "title")
_XML_DESCRIPTION = ("question", "description", "desc")
_XML_NARRATIVE = ("narrative", "narr")
_TSV_HEADERS = {"id", "qid", "query_id", "query-id", "_id", "topic", "topic_id"}


def read_topics(path: Path, bad: BadLines | None = None) -> Iterator[TopicRecord]:
    """Read a topics file of any supported shape; fully validated before the first record. A
    bad line of TSV or JSONL topics is set aside into `bad.rejected` when `bad` keeps going
    (`--on-bad-lines warn|skip`); TREC and XML topics are read whole or refused."""
    path = Path(path)
    text = read_text(path)
    first = next((line.strip() for line in text_lines(text) if line.strip()), "")
    if not first:
        raise InputError(path, None, "topics file has no topics")
    if first.startswith("<top>"):
        records = _read_trec(path, text)
    elif first.startswith("<"):
        records = _read_xml(path, text)
    elif first.startswith("{"):
        records = _read_jsonl(path, text, bad)
    else:
        records = _read_tsv(path, text, bad)
    if not records:
        raise InputError(path, None, "topics file has no topics")
    return iter(records)


def normalise_query(text: str) -> str:
    """A query's matching key: NFKC, casefolded, whitespace collapsed, end punctuation dropped.

    LongEval renumbers queries between snapshots; the same information need keeps its text up
    to case, spacing, compatibility forms (full-width letters, ligatures) and a trailing "?".
    """
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    start, end = 0, len(folded)
    while start < end and _is_edge_junk(folded[start]):
        start += 1
    while end > start and _is_edge_junk(folded[end - 1]):
        end -= 1
    return " ".join(folded[start:end].split())


def match_key(text: str, rule: str = "normalised") -> str:
    """A query's identity under a collection's topic match rule: `normalised` (`normalise_query`)
    or `exact` (the text as given: "Energy" and "energy" stay two topics)."""
    return text if rule == "exact" else normalise_query(text)


def _is_edge_junk(char: str) -> bool:
    """Whitespace or Unicode punctuation (categories P*), stripped from a query's ends."""
    return char.isspace() or unicodedata.category(char).startswith("P")


class _Topics:
    """Collects records and refuses a second topic with the same id (naming both lines)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.records: list[TopicRecord] = []
        self.lines: dict[str, int] = {}

    def add(self, record: TopicRecord, line: int | None) -> None:
        if not record.topic_id:
            raise InputError(self.path, line, "topic has an empty id")
        try:
            check_identifier(record.topic_id, "topic id", TOPIC_ID_LENGTH)
        except Refused as exc:
            raise InputError(self.path, line, str(exc)) from None
        record = cleaned_topic(record)
        if not record.query:
            raise InputError(self.path, line, f"topic {record.topic_id!r} has an empty query")
        if record.topic_id in self.lines:
            first = self.lines[record.topic_id]
            where = f" (first on line {first})" if first else ""
            raise InputError(self.path, line, f"duplicate topic id {record.topic_id!r}{where}")
        self.lines[record.topic_id] = line or 0
        self.records.append(record)


def cleaned_topic(record: TopicRecord) -> TopicRecord:
    """The record with its free text as both databases store it (`tcdb.limits.clean_text`),
    and how many characters that took out (`removed`). Every topic reader's one rule."""
    texts = (record.query, record.description, record.narrative, *record.fields.values())
    if all(text is None or clean_text(text) is text for text in texts):
        return record
    cleaned = replace(
        record,
        query=clean_text(record.query).strip(),
        description=None if record.description is None else clean_text(record.description),
        narrative=None if record.narrative is None else clean_text(record.narrative),
        fields={key: clean_text(value) for key, value in record.fields.items()},
    )
    return replace(cleaned, removed=_length(record) - _length(cleaned))


def _length(record: TopicRecord) -> int:
    return sum(len(text) for text in (record.query, record.description, record.narrative,
                                      *record.fields.values()) if text is not None)


def _read_trec(path: Path, text: str) -> list[TopicRecord]:
    """Classic TREC topics, line by line exactly as ir_datasets' TrecQueries reads them."""
    topics = _Topics(path)
    fields: dict[str, str] = {}
    reading: str | None = None
    num_line: int | None = None
    number = 0
    for number, bare in enumerate(text_lines(text), start=1):
        line = bare + "\n"
        if line.startswith("</top>"):
            topics.add(_trec_record(path, number, fields), num_line)
            fields, reading, num_line = {}, None, None
        for pattern, target in _TREC_TAGS:
            match = pattern.match(line)
            if match:
                fields[target] = line[match.end() :]
                reading = target
                if target == "topic_id":
                    num_line = number
                break
        else:
            if reading and not line.startswith("<"):
                fields[reading] += line
    if fields:
        raise InputError(path, number, "last topic is not closed with </top>")
    return topics.records


def _trec_record(path: Path, line: int, fields: dict[str, str]) -> TopicRecord:
    """One classic topic from its raw fields (`</title>` removed, whitespace stripped)."""
    clean = {key: value.replace("</title>", "").strip() for key, value in fields.items()}
    if "topic_id" not in clean:
        raise InputError(path, line, "topic has no <num>")
    if "query" not in clean:
        raise InputError(path, line, f"topic {clean['topic_id']!r} has no <title>")
    return TopicRecord(
        topic_id=clean["topic_id"],
        query=clean["query"],
        description=clean.get("description"),
        narrative=clean.get("narrative"),
    )


def _read_xml(path: Path, text: str) -> list[TopicRecord]:
    """`<topics><topic number="…">` XML: query/title, question/description, narrative."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise InputError(path, exc.position[0], f"not well-formed XML: {exc}") from exc
    topics = _Topics(path)
    elements = [root] if root.tag == "topic" else [e for e in root if e.tag == "topic"]
    lines = _xml_topic_lines(text, len(elements))
    for element, line in zip(elements, lines, strict=True):
        children = {child.tag: "".join(child.itertext()).strip() for child in element}
        topic_id = (element.attrib.get("number") or children.get("number") or "").strip()
        query = next((children[k] for k in _XML_QUERY if k in children), "")
        description = next((children[k] for k in _XML_DESCRIPTION if k in children), None)
        narrative = next((children[k] for k in _XML_NARRATIVE if k in children), None)
        used = {"number", *_XML_QUERY, *_XML_DESCRIPTION, *_XML_NARRATIVE}
        extra = {k: v for k, v in element.attrib.items() if k != "number"}
        extra.update({k: v for k, v in children.items() if k not in used})
        record = TopicRecord(topic_id, query, description, narrative, extra)
        topics.add(record, line)
    return topics.records


def _xml_topic_lines(text: str, count: int) -> list[int | None]:
    """Line of each `<topic` start tag in document order (ElementTree keeps no positions).

    If the source does not show exactly `count` such tags (one in a comment, say), the lines
    are unknown rather than wrong.
    """
    starts = [m.start() for m in re.finditer(r"<topic\b", text)]
    if len(starts) != count:
        return [None] * count
    return [text.count("\n", 0, start) + 1 for start in starts]


def _read_tsv(path: Path, text: str, bad: BadLines | None = None) -> list[TopicRecord]:
    """`id<TAB>query` lines; a header such as `id<TAB>query` on the first line is skipped."""
    topics = _Topics(path)
    header_checked = False
    for number, line in enumerate(text_lines(text), start=1):
        with one_line(bad):
            if not line.strip():
                continue
            fields = [field.strip() for field in line.rstrip("\r").split("\t")]
            if len(fields) != 2:
                reason = f"expected 2 tab-separated columns `id query`, found {len(fields)}"
                raise InputError(path, number, reason)
            if not header_checked:
                header_checked = True
                if fields[0].lower() in _TSV_HEADERS and fields[1].lower() in {"query", "text"}:
                    continue
            topics.add(TopicRecord(fields[0], fields[1]), number)
    return topics.records


def _json_kind(value: object) -> str:
    """What a JSON value is, as a message says it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {dict: "an object", list: "an array", float: "a number with a fraction"}.get(
        type(value), type(value).__name__)


def _read_jsonl(path: Path, text: str, bad: BadLines | None = None) -> list[TopicRecord]:
    """BEIR queries.jsonl: `_id`, `text`; `metadata` and other keys become `fields`."""
    topics = _Topics(path)
    for number, line in enumerate(text_lines(text), start=1):
        with one_line(bad):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(path, number, f"not valid JSON: {exc.msg}") from exc
            if not isinstance(obj, dict):
                raise InputError(path, number, "expected a JSON object per line")
            for key in ("_id", "text"):
                if key not in obj:
                    raise InputError(path, number, f"missing key {key!r}")
            fields: dict[str, str] = {}
            metadata = obj.get("metadata") or {}
            if not isinstance(metadata, dict):
                raise InputError(path, number, "'metadata' must be a JSON object")
            extras = {k: v for k, v in obj.items() if k not in ("_id", "text", "metadata")}
            for key, value in {**metadata, **extras}.items():
                fields[key] = value if isinstance(value, str) \
                    else json.dumps(value, ensure_ascii=False)
            # the id as the documents' reader takes it (a string or an integer), the query a
            # string: str() of null, true, 1.5 or an object would store "None", "True", "1.5"…
            topic_id, query = obj["_id"], obj["text"]
            if not is_json_id(topic_id):
                raise InputError(path, number, f"'_id' is {_json_kind(topic_id)}, not a topic "
                                 "id (a string or an integer)")
            if not isinstance(query, str):
                raise InputError(path, number, f"'text' is {_json_kind(query)}, not a string")
            record = TopicRecord(str(topic_id).strip(), query.strip(), fields=fields)
            topics.add(record, number)
    return topics.records
