"""ir_metadata (https://www.ir-metadata.org): a run's PRIMAD description, read and written back.

LongEval and TIRA ask participants to describe each run in the ir_metadata schema — Platform,
Research goal, Implementation, Method, Actor, Data — as YAML, either in the run file's header
(comment lines between `# ir_metadata.start` and `# ir_metadata.end`, as repro_eval writes them)
or in a file beside the run. This module finds that YAML (scanning only the run file's leading
comment lines: a million-line run costs a few lines), checks it (it parses, its top-level keys
are the schema's, its known fields have the schema's types: `ir_metadata_schema`), and keeps its
text byte for byte so that `tcdb run export` writes the same block back. Bad YAML is an
`InputError` naming the file and the line; nothing is imported.

What reports use is read off as plain fields: the system's description (`research goal` →
`description`, LongEval's template), its category (`method` → `category`, or the ranking stages'
names), its platform (`platform` → `software` → `retrieval toolkit`, else `libraries`), the team
(`actor` → `team`) and whether it is automatic (`method` → `automatic`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcdb.collections.files.opening import open_input
from tcdb.collections.files.yaml_input import load_yaml
from tcdb.collections.ir_metadata.schema import (
    CATEGORIES,
    GENERAL,
    SCHEMA,
    SECTIONS,
    check,
    json_safe,
    pairs,
)
from tcdb.errors import InputError

START = "ir_metadata.start"
END = "ir_metadata.end"
SIDE_SUFFIXES = (".yaml", ".yml", ".ir_metadata")
HEADER_SCAN_LIMIT = 100_000  # leading comment lines scanned at most: a header, not a run

# Ranking stages by the schema's naming conventions (and the field's common names): a run is
# `llm` if a stage is, else `neural` if a stage is, else `lexical` if every stage is.
LEXICAL_STAGES = {"bm25", "rm3", "ax", "piv", "dir", "ql", "qld", "tf-idf", "tfidf", "dph",
                  "pl2", "bo1", "lmdirichlet", "bm25+rm3"}
NEURAL_STAGES = {"monobert", "monot5", "duot5", "colbert", "colbertv2", "dpr", "ance",
                 "tct-colbert", "splade", "contriever", "cross-encoder", "bi-encoder",
                 "dense", "bert"}
LLM_STAGES = {"llm", "rankgpt", "rankllama", "rankzephyr", "rankvicuna", "gpt", "llama"}


@dataclass(frozen=True)
class IrMetadata:
    """One run's ir_metadata: its YAML text as given (without the `# ` of a header) and parsed."""

    text: str  # the YAML, one `\\n` per line: what `header_block` writes back
    data: dict[str, Any]  # parsed, JSON-safe (dates as ISO text, keys as text)
    source: str  # "header" or the side file's path
    tag_line: int | None = field(default=None, compare=False)  # where `tag:` is, for errors

    @property
    def tag(self) -> str | None:
        value = self.data.get("tag")
        return None if value is None else str(value)

    def _get(self, *keys: str) -> Any:
        node: Any = self.data
        for key in keys:
            if not isinstance(node, dict):
                return None
            node = node.get(key)
        return node

    @property
    def description(self) -> str | None:
        """The system's description (`research goal` → `description`)."""
        value = self._get("research goal", "description")
        return None if value is None else str(value).strip() or None

    @property
    def team(self) -> str | None:
        value = self._get("actor", "team")
        return None if value is None else str(value).strip() or None

    @property
    def automatic(self) -> bool | None:
        value = self._get("method", "automatic")
        return value if isinstance(value, bool) else None

    @property
    def category(self) -> str | None:
        """`method` → `category` if given, else read off the ranking stages' names."""
        given = self._get("method", "category")
        if given is not None:
            return CATEGORIES.get(str(given).strip().lower())
        stages = self._get("method", "retrieval") or []
        names = {str(s.get("name", "")).strip().lower() for s in stages if isinstance(s, dict)}
        if not names:
            return None
        if names & LLM_STAGES:
            return "llm"
        if names & NEURAL_STAGES:
            return "neural"
        return "lexical" if names <= LEXICAL_STAGES else None

    @property
    def platform(self) -> str | None:
        """The retrieval toolkits, else the libraries, joined by commas (as given)."""
        software = self._get("platform", "software") or {}
        if not isinstance(software, dict):
            return None
        named = _flatten(software.get("retrieval toolkit")) or _flatten(software.get("libraries"))
        return ", ".join(named) or None

    def to_data(self) -> dict[str, Any]:
        """What the run's `metadata` column keeps."""
        return {"yaml": self.text, "data": self.data, "source": self.source}


def _flatten(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, dict):
        return [item for v in value.values() for item in _flatten(v)]
    if isinstance(value, list):
        return [item for v in value for item in _flatten(v)]
    return [str(value)]


# ------------------------------------------------------------------------------------ reading


def read_header(path: Path | str) -> IrMetadata | None:
    """The ir_metadata block among the run file's leading `#` lines, or None if it has none."""
    file = Path(path)
    lines: list[tuple[int, str]] = []
    with open_input(file) as stream:  # gzip, bz2, xz by their magic bytes; bounded
        for number, raw in enumerate(stream, start=1):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw.startswith(b"#") or number > HEADER_SCAN_LIMIT:
                break
            lines.append((number, _decode(file, number, raw)))
    block = _block(file, ((n, _uncomment(line)) for n, line in lines))
    if block is None:
        return None
    first, content = block
    return parse(file, first, content, "header")


def side_files(run_path: Path | str) -> list[Path]:
    """The side files that exist for a run file: `RUN.yaml`, `RUN.yml` or `RUN.ir_metadata`,
    RUN being the file's name or its name without its suffixes (`bm25.run.gz` → `bm25`)."""
    run = Path(run_path)
    stems = dict.fromkeys([run.name, run.name.removesuffix(".gz"),
                           run.name.split(".", 1)[0]])
    found = [run.with_name(stem + suffix) for stem in stems for suffix in SIDE_SUFFIXES]
    return [p for p in dict.fromkeys(found) if p.is_file() and p != run]


def read_side_file(path: Path | str) -> IrMetadata:
    """A YAML file of one run's ir_metadata: the whole file, or the lines between its
    `ir_metadata.start` and `ir_metadata.end` lines (commented or not) when it has them."""
    file = Path(path)
    with open_input(file) as stream:
        raw = stream.read().removeprefix(b"\xef\xbb\xbf")
    lines = [(n, _decode(file, n, line)) for n, line in enumerate(raw.split(b"\n"), start=1)]
    if lines and lines[-1][1] == "":
        lines.pop()
    marked = any(_uncomment(line).strip() in (START, END) or line.strip() in (START, END)
                 for _, line in lines)
    if marked:
        commented = all(line.startswith("#") for _, line in lines if line.strip())
        block = _block(file, ((n, _uncomment(line) if commented else line) for n, line in lines))
        assert block is not None
        first, content = block
    else:
        first, content = 1, [line for _, line in lines]
    if not any(line.strip() for line in content):
        raise InputError(file, None, "empty ir_metadata file")
    return parse(file, first, content, str(file))


def _decode(file: Path, number: int, raw: bytes) -> str:
    try:
        return raw.decode("utf-8").rstrip("\n").removesuffix("\r")
    except UnicodeDecodeError as exc:
        raise InputError(file, number, f"not UTF-8 text ({exc.reason} at byte {exc.start})") \
            from None


def _uncomment(line: str) -> str:
    """A header line's YAML: without its `#` and the one space after it (repro_eval's `# `)."""
    text = line[1:] if line.startswith("#") else line
    return text[1:] if text.startswith(" ") else text


def _block(file: Path, lines: Iterator[tuple[int, str]]) -> tuple[int, list[str]] | None:
    """(line of the YAML's first line, its lines) between the markers; None without a start."""
    start: int | None = None
    content: list[str] = []
    for number, line in lines:
        marker = line.strip()
        if start is None:
            if marker == END:
                raise InputError(file, number, f"{END} without {START} before it")
            if marker == START:
                start = number
            continue
        if marker == START:
            raise InputError(file, number, f"{START} again (the block began on line {start})")
        if marker == END:
            if not any(c.strip() for c in content):
                raise InputError(file, start, "empty ir_metadata block")
            return start + 1, content
        content.append(line)
    if start is None:
        return None
    raise InputError(file, start, f"{START} without {END} among the leading comment lines")


# ------------------------------------------------------------------------------------ checking


def parse(file: Path, first: int, lines: list[str], source: str) -> IrMetadata:
    """Parse and check the YAML `lines` (the first of which is line `first` of `file`)."""
    import yaml

    text = "".join(line + "\n" for line in lines)

    def error(mark: Any, reason: str) -> InputError:
        return InputError(file, first + (mark.line if mark is not None else 0), reason)

    document = load_yaml(file, text, first)  # bounded, plain, no key twice (yaml_input)
    node = document.node
    if not isinstance(node, yaml.MappingNode):
        raise error(getattr(node, "start_mark", None),
                    "ir_metadata must be a mapping of the PRIMAD sections")
    known = ", ".join(GENERAL + SECTIONS)
    tag_line = None
    for key_node, _ in node.value:
        key = str(getattr(key_node, "value", ""))
        if key not in SCHEMA:
            raise error(key_node.start_mark, f"{key!r} is not an ir_metadata section ({known})")
    for key, value in pairs(node, error, ""):
        if key == "tag":
            tag_line = first + value.start_mark.line
        check(value, SCHEMA[key], key, error)
    data = json_safe(document.data)
    return IrMetadata(text=text, data=data, source=source, tag_line=tag_line)


# ------------------------------------------------------------------------------------ writing


def header_block(text: str) -> str:
    """The YAML as a run file's header: each line behind `# `, between the markers; reading it
    back (`read_header`) gives `text` byte for byte."""
    lines = text.removesuffix("\n").split("\n")
    body = "".join(f"# {line}\n" if line else "#\n" for line in lines)
    return f"# {START}\n{body}# {END}\n"
