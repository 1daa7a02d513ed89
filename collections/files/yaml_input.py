"""YAML from a file is data: the one loader for every YAML file tcdb reads (collection specs,
ir_metadata headers and side files, literature files).

Why one loader: PyYAML's `safe_load` still expands aliases without bound (a "billion laughs"
file of a few hundred bytes is billions of values), recurses until Python's stack gives out on
deep nesting, keeps the last of two equal keys silently, and leaves NUL (`"\\0"`) in text,
which PostgreSQL refuses where SQLite stores it. Here a document is

* **bounded**: at most `MAX_BYTES` bytes, `MAX_DEPTH` levels of nesting, `MAX_ALIASES` aliases,
  and `MAX_ALIAS_VALUES` values that aliases add when expanded (counted on the composed tree,
  before anything is built, so a bomb costs its own size);
* **plain**: mappings, lists, text, integers, numbers, booleans, null and dates only; any other
  tag (`!!python/…`, `!!binary`, `!!set`, a local `!tag`) and merge keys (`<<`) are refused;
* **strict**: a key given twice in one mapping is refused (naming both lines); a key is text;
  a control character other than tab, line feed and carriage return, in a key or a value, is
  refused — the same on both databases;

and every refusal is one `InputError` naming the file, the line and the reason. `validate`
then checks the data against the caller's pydantic model (strict: the text "false" is not a
boolean; unknown keys refused with the known ones listed), so each caller keeps its schema in
its model's fields.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from tcdb.errors import InputError

MAX_BYTES = 4 << 20  # a spec, a header or a literature file is text a person wrote
MAX_DEPTH = 32  # ir_metadata, the deepest schema read here, nests 5 levels
MAX_ALIASES = 100
MAX_ALIAS_VALUES = 10_000  # values aliases may add when expanded

# Tags a plain document resolves to (PyYAML's YAML 1.1 implicit resolution).
_CORE = "tag:yaml.org,2002:"
PLAIN_TAGS = {f"{_CORE}{name}" for name in
              ("str", "int", "float", "bool", "null", "timestamp", "seq", "map")}
# Control characters a value may not hold: Unicode Cc but tab, line feed and carriage return.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")

Path_ = tuple[str | int, ...]  # where a value is: keys and list positions from the root


class _Bounded(yaml.SafeLoader):
    """PyYAML's safe composer, counting depth and aliases as it goes (its recursion is the
    depth: bounded here before Python's stack is)."""

    def __init__(self, stream: str, file: str | Path, first_line: int) -> None:
        super().__init__(stream)
        self.file, self.first_line = file, first_line
        self.depth = 0
        self.aliases = 0
        self.first_alias: int | None = None  # its line

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        line = self.first_line + (event.start_mark.line if event.start_mark else 0)
        if isinstance(event, yaml.AliasEvent):
            self.aliases += 1
            if self.first_alias is None:
                self.first_alias = line
            if self.aliases > MAX_ALIASES:
                raise InputError(self.file, line,
                                 f"more than {MAX_ALIASES} aliases (*name): refused")
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise InputError(self.file, line,
                             f"nested more than {MAX_DEPTH} levels deep: refused")
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


@dataclass(frozen=True)
class YamlDocument:
    """A YAML document read by the rules above: its data and where each value stands."""

    file: str | Path
    data: Any  # dict / list / str / int / float / bool / None / date / datetime
    node: yaml.Node | None  # the composed tree (for a caller that checks tags itself)
    lines: dict[Path_, int]  # each value's line in the file (a mapping value: its key's)
    written: dict[Path_, str]  # a number or date as written, where it was one

    def line(self, where: Path_) -> int | None:
        """The line of the value at `where`, or of the nearest enclosing value."""
        for end in range(len(where), -1, -1):
            if where[:end] in self.lines:
                return self.lines[where[:end]]
        return None

    def fail(self, where: Path_, reason: str) -> InputError:
        return InputError(self.file, self.line(where), reason)


def read_yaml(path: Path | str) -> YamlDocument:
    """A YAML file read (`files.read_input`'s rules: compression, bounds) and loaded."""
    from tcdb.collections.files.opening import read_input

    _, raw = read_input(path)
    return load_yaml(path, raw)


def load_yaml(file: str | Path, text: str | bytes, first_line: int = 1) -> YamlDocument:
    """The document in `text` (line `first_line` of `file`), or an InputError: see the module."""
    size = len(text.encode("utf-8") if isinstance(text, str) else text)
    if size > MAX_BYTES:
        raise InputError(file, None, f"YAML of {size:,} bytes: more than {MAX_BYTES:,} "
                         "bytes is refused")
    if isinstance(text, bytes):
        raw = text
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = raw[:exc.start].count(b"\n") + first_line
            raise InputError(file, line, f"not UTF-8 text ({exc.reason} at byte "
                             f"{exc.start})") from None
    loader: _Bounded | None = None
    try:
        loader = _Bounded(text, file, first_line)  # its reader looks at every character
        node = loader.get_single_node()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        reason = " ".join(str(part) for part in (exc.context, exc.problem) if part)
        raise InputError(file, None if mark is None else first_line + mark.line,
                         f"not valid YAML: {reason}") from None
    except yaml.reader.ReaderError as exc:  # a raw control character: named with its line
        line = text[:exc.position].count("\n") + first_line
        raise InputError(file, line, f"not valid YAML: a control character "
                         f"(U+{exc.character:04X}) is not allowed in YAML") from None
    except yaml.YAMLError as exc:
        raise InputError(file, None, f"not valid YAML: {exc}") from None
    except RecursionError:  # a stack smaller than MAX_DEPTH needs: still one line
        raise InputError(file, None, "nested too deep: refused") from None
    finally:
        if loader is not None:
            loader.dispose()
    if node is None:
        return YamlDocument(file, None, None, {}, {})
    sizes: dict[int, int] = {}
    expanded = _expanded_size(file, first_line, node, sizes, set())
    if expanded - len(sizes) > MAX_ALIAS_VALUES:
        raise InputError(file, loader.first_alias, f"aliases expand to {expanded:,} values, "
                         f"{expanded - len(sizes):,} more than written (at most "
                         f"{MAX_ALIAS_VALUES:,}): refused, like any alias bomb")
    builder = _Builder(file, first_line, loader)
    data = builder.build(node, ())
    return YamlDocument(file, data, node, builder.lines, builder.written)


def _expanded_size(file: str | Path, first: int, node: yaml.Node, sizes: dict[int, int],
                   open_: set[int]) -> int:
    """How many values `node` is once every alias is expanded, counted on the tree (an alias
    is the same node object again, so this costs the tree's size); a node holding itself is
    refused."""
    key = id(node)
    if key in sizes:
        return sizes[key]
    if key in open_:
        raise InputError(file, first + node.start_mark.line,
                         "an alias inside the value it names (endless): refused")
    open_.add(key)
    size = 1
    if isinstance(node, yaml.SequenceNode):
        size += sum(_expanded_size(file, first, item, sizes, open_) for item in node.value)
    elif isinstance(node, yaml.MappingNode):
        size += sum(_expanded_size(file, first, k, sizes, open_)
                    + _expanded_size(file, first, v, sizes, open_) for k, v in node.value)
    open_.discard(key)
    sizes[key] = size
    return size


class _Builder:
    """Python values from the composed tree, with each value's line and, for numbers and
    dates, the text as written."""

    def __init__(self, file: str | Path, first: int, loader: yaml.SafeLoader) -> None:
        self.file, self.first, self.loader = file, first, loader
        self.lines: dict[Path_, int] = {}
        self.written: dict[Path_, str] = {}

    def fail(self, node: yaml.Node, reason: str) -> InputError:
        return InputError(self.file, self.first + node.start_mark.line, reason)

    def build(self, node: yaml.Node, where: Path_) -> Any:
        self.lines.setdefault(where, self.first + node.start_mark.line)
        if node.tag not in PLAIN_TAGS:
            tag = node.tag.replace(_CORE, "!!")
            raise self.fail(node, f"the tag {tag} is refused: YAML here is data (text, "
                            "numbers, true/false, dates, lists and mappings)")
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*where, i)) for i, item in enumerate(node.value)]
        if isinstance(node, yaml.MappingNode):
            return self.mapping(node, where)
        text = str(node.value)
        self.characters(node, text, where, "value")
        try:
            value = self.loader.construct_object(node)
        except ValueError:  # a date-like text that is no date (2022-13-01): text, to be named
            value = text
        if isinstance(value, int | float | dt.date) and not isinstance(value, bool):
            self.written[where] = text
        return value

    def mapping(self, node: yaml.MappingNode, where: Path_) -> dict[str, Any]:
        seen: dict[str, int] = {}
        result: dict[str, Any] = {}
        for key_node, value_node in node.value:
            line = self.first + key_node.start_mark.line
            if key_node.tag == f"{_CORE}merge":
                raise self.fail(key_node, "merge keys (<<) are refused: write the keys out")
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag not in PLAIN_TAGS:
                raise self.fail(key_node, f"{_where(where) or 'a key'}: a key must be text")
            key = str(key_node.value)
            self.characters(key_node, key, where, "key")
            if key in seen:
                place = f"{_where(where)}: " if where else ""
                raise self.fail(key_node, f"{place}the key {key!r} is given twice (first on "
                                f"line {seen[key]})")
            seen[key] = line
            self.lines[(*where, key)] = line
            result[key] = self.build(value_node, (*where, key))
        return result

    def characters(self, node: yaml.Node, text: str, where: Path_, what: str) -> None:
        bad = _CONTROL.search(text)
        if bad is not None:
            place = f"{_where(where)}: " if where else ""
            raise self.fail(node, f"{place}a {what} holds a control character "
                            f"(U+{ord(bad.group()):04X}): refused")


def _where(where: Path_) -> str:
    """A value's place as a person reads it: `snapshots [2] → docs`, `item 2 → value`."""
    text = " → ".join(f"[{p + 1}]" if isinstance(p, int) else p for p in where) \
        .replace(" → [", " [")
    return re.sub(r"^\[(\d+)\]", r"item \1", text)


# ------------------------------------------------------------------------------------ models


class YamlModel(BaseModel):
    """The base of a model a YAML file is checked against: strict types (the text "false" is
    not a boolean, 1 is not text), unknown keys refused, immutable."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


M = TypeVar("M", bound=BaseModel)


def validate(document: YamlDocument, model: type[M], data: Any = None,
             where: Path_ = (), context: dict[str, Any] | None = None) -> M:
    """`data` (default: the document's) as `model`, or an InputError naming the line, the
    place and the reason. A number or a date where text is expected is the text as written
    (`label: 2022` is "2022", `label: 010` stays "010")."""
    data = document.data if data is None else data
    for _ in range(100):  # each turn takes back one number's text
        try:
            return model.model_validate(data, strict=True, context=context)
        except ValidationError as exc:
            error = exc.errors()[0]
            loc = (*where, *error["loc"])
            if error["type"] == "string_type" and loc in document.written:
                data = _replaced(data, tuple(error["loc"]), document.written[loc])
                continue
            raise document.fail(loc, _reason(model, error, loc)) from None
    raise document.fail(where, "too many values to check")  # pragma: no cover


def _replaced(data: Any, loc: tuple[Any, ...], value: Any) -> Any:
    """`data` with the value at `loc` replaced (copies along the way; the rest shared)."""
    if not loc:
        return value
    head, rest = loc[0], loc[1:]
    if isinstance(data, dict):
        return {**data, head: _replaced(data[head], rest, value)}
    copy = list(data)
    copy[head] = _replaced(copy[head], rest, value)
    return copy


def _reason(model: type[BaseModel], error: Any, loc: Path_) -> str:
    kind = error["type"]
    place = _where(tuple(p for p in loc))
    if kind == "extra_forbidden":
        known = known_keys(model, tuple(error["loc"][:-1]))
        key = str(error["loc"][-1])
        inside = f" in {_where(loc[:-1])}" if len(loc) > 1 else ""
        close = difflib.get_close_matches(key, known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"unknown key {key!r}{inside}{hint}: the keys here are {', '.join(known)}"
    if kind == "missing":
        return f"{place} is missing"
    context = error.get("ctx") or {}
    if kind in ("too_long", "too_short"):
        bound = "at most" if kind == "too_long" else "at least"
        size = context.get("max_length" if kind == "too_long" else "min_length")
        return f"{place}: must have {bound} {size} items, not {context.get('actual_length')}"
    message = _KINDS.get(kind) or str(error["msg"])
    message = message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    message = re.sub(r"^Input should be", "must be", message)
    message = re.sub(r"^Input is", "is", message)
    given = error.get("input")
    shown = "" if kind.startswith("value_error") or kind == "assertion_error" \
        else f", not {_describe(given)}"
    return f"{place}: {message}{shown}" if place else f"{message}{shown}"


_KINDS = {"bool_type": "must be true or false", "string_type": "must be text",
          "int_type": "must be a whole number", "float_type": "must be a number",
          "list_type": "must be a list", "dict_type": "must be a mapping",
          "model_type": "must be a mapping", "date_type": "must be a date (YYYY-MM-DD)"}


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):
        from tcdb.limits import shown

        return f"the text {shown(value)}"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "an empty value"
    return repr(value)


def known_keys(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The keys the model takes at `loc` (its field names, or their aliases)."""
    current: Any = model
    for part in loc:
        current = _unwrap(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(str(part))
            current = field.annotation if field is not None else None
        elif typing.get_origin(current) in (list, tuple):
            args = typing.get_args(current)
            current = args[0] if args else None
        else:
            return []
    current = _unwrap(current)
    if not (isinstance(current, type) and issubclass(current, BaseModel)):
        return []
    return [field.alias or name for name, field in current.model_fields.items()]


def _unwrap(annotation: Any) -> Any:
    """`X` of `X | None` (and of `Annotated[X, …]`)."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return _unwrap(args[0])
    return annotation


def field_names(model: type[BaseModel]) -> tuple[str, ...]:
    """A model's keys, in order: what a file of its kind may hold."""
    return tuple(field.alias or name for name, field in model.model_fields.items())

