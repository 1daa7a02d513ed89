"""Shared output helpers: rich tables for people, `--json` for scripts, one-line errors."""

from __future__ import annotations

import contextlib
import json
import math
import sys
from collections.abc import Callable, Iterable, Sequence
from datetime import date, datetime
from enum import Enum
from typing import TYPE_CHECKING, Any

from rich.console import Console

from tcdb.escaping import json_text, terminal_text
from tcdb.operations.result import json_safe
from tcdb.vocabulary import BELOW_PIVOT_MARK
from tcdb.vocabulary import format_p as format_p  # the one rule for a p-value (re-exported here)

if TYPE_CHECKING:
    from rich.box import Box
    from rich.table import Table
    from rich.text import Text

# Neither console reads markup or emoji codes in what it prints: names and tags are data, and
# a collection named `[/]` would otherwise fail to print after its row is committed (`[bold]`
# and `:thumbs_up:` would change). Style is given as `Text` (`tick`, `heading`), never by
# markup around an f-string.
console = Console(soft_wrap=True, markup=False, emoji=False)
# On a terminal a line of prose wider than the screen wraps at spaces (the terminal itself
# would cut it mid-word); piped, every line stays whole for the next program.
console.soft_wrap = not console.is_terminal
err_console = Console(stderr=True, markup=False, emoji=False)
err_console.soft_wrap = not err_console.is_terminal  # errors and warnings alike

def encode_anything() -> None:
    """Let stdout and stderr write a character their encoding lacks as its escape (`\\xe9`)
    instead of failing: a result printed after its change was committed must never end in a
    traceback (`café` or `✓` on an ASCII-only terminal or pipe)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):  # not a text stream we may change
                reconfigure(errors="backslashreplace")


def say(text: str) -> None:
    """One line of prose that may carry names from the data (a legend, a summary): control
    characters shown as escapes, nothing highlighted; wrapped at spaces on a terminal."""
    console.print(terminal_text(text), highlight=False)


def tick(text: str) -> Text:
    """`✓ text` for a change that was made: the tick green, `text` as it is (names in it are
    neither markup nor emoji; control characters shown as escapes)."""
    from rich.text import Text

    return Text.assemble(("✓", "green"), " ", terminal_text(text))


def heading(text: str) -> Text:
    """`text` in bold, as it is (see `tick`): a report's first line, naming what it is on."""
    from rich.text import Text

    return Text(terminal_text(text), style="bold")


def _default(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def print_json(obj: Any) -> None:
    text = json.dumps(json_safe(obj), default=_default, indent=2, ensure_ascii=False)
    # Such characters occur only inside strings, where `\uXXXX` is the same character.
    text = json_text(text)
    try:
        text.encode(sys.stdout.encoding or "utf-8")
    except (UnicodeEncodeError, LookupError):  # an ASCII-only pipe: JSON's own escapes
        text = json.dumps(json_safe(obj), default=_default, indent=2, ensure_ascii=True)
    sys.stdout.write(text)
    sys.stdout.write("\n")


def print_table(
    columns: Sequence[str], rows: Iterable[Sequence[Any]], title: str | None = None
) -> None:
    """A table that never cuts a name or a number. Piped, it is plain aligned text as wide as
    it needs. On a terminal it takes the first layout that fits the screen: boxed; without
    lines (two spaces between columns); split into several tables that each repeat the key
    column (the first that tells the rows apart: run, system, …); one record after the
    other, a field a line. Only free text (with spaces) ever wraps, and only at a space.
    When not even that fits (a single name wider than the screen), the table without lines
    folds its widest columns.
    Control characters in cells, names and title are shown as escapes (`terminal_text`)."""
    names = [terminal_text(str(c)) for c in columns]
    cells = [[format_cell(v) for v in row] for row in rows]
    heading = terminal_text(title) if title else None
    numeric = [bool(cells) and all(_is_number(row[i]) for row in cells)
               for i in range(len(names))]
    if not console.is_terminal:
        _print_plain(names, cells, numeric, heading)
        return
    _print_terminal(names, cells, numeric, heading)


def _print_terminal(names: list[str], cells: list[list[str]], numeric: list[bool],
                    title: str | None) -> None:
    from rich import box
    from rich.cells import cell_len

    screen = console.width
    widths = [max([cell_len(name), *(cell_len(row[i]) for row in cells)])
              for i, name in enumerate(names)]
    everything = list(range(len(names)))

    def boxed(shown: list[int]) -> int:  # a cell's padding and border, one edge more
        return sum(widths[i] for i in shown) + 3 * len(shown) + 1

    def bare(shown: list[int]) -> int:  # two spaces between columns, none at the edges
        return sum(widths[i] for i in shown) + 2 * (len(shown) - 1)

    if boxed(everything) <= screen:
        _show_table(names, cells, numeric, title, everything, box.HEAVY_HEAD, boxed(everything))
        return
    if bare(everything) <= screen:
        _show_table(names, cells, numeric, title, everything, None, bare(everything))
        return
    parts, lines = _split_columns(widths, screen, boxed, bare, _key_columns(cells, numeric))
    if parts:
        for n, shown in enumerate(parts, 1):
            if n > 1:
                console.print()
            part_title = f"{title} ({n}/{len(parts)})" if title else None
            _show_table(names, cells, numeric, part_title, shown,
                        box.HEAVY_HEAD if lines else None, (boxed if lines else bare)(shown))
        return
    if _show_records(names, cells, title, screen):
        return
    # Not even a record a field a line fits: a name is wider than the screen. The widest
    # columns fold (each keeps at least 10 cells), the others stay whole.
    fold: set[int] = set()
    for i in sorted(everything, key=lambda i: -widths[i]):
        if bare([j for j in everything if j not in fold]) + 12 * len(fold) <= screen:
            break
        fold.add(i)
    _show_table(names, cells, numeric, title, everything, None, bare(everything), fold=fold)


def _key_columns(cells: list[list[str]], numeric: list[bool]) -> list[int]:
    """The columns that tell the rows apart, the names each part of a split table repeats: the
    first text column whose values are all different (a run list's `run`, not its
    `collection`, the same on every row); else, in order, the text columns that each tell more
    rows apart, until together they tell all of them (persistence's `system` and `snapshot`
    when it compares several snapshots). A figure is never the key — that its values happen to
    differ names no row — unless it is the first column (a topic id). The first column when
    nothing else tells the rows apart."""
    n_columns = len(numeric)
    candidates = [i for i in range(n_columns) if i == 0 or not numeric[i]]
    for i in candidates:
        values = [row[i] for row in cells]
        if len(set(values)) == len(values):
            return [i]
    key: list[int] = []
    told = 1
    for i in candidates:
        apart = len({tuple(row[j] for j in [*key, i]) for row in cells})
        if apart > told:
            key, told = [*key, i], apart
        if told == len(cells):
            return key
    return [0]


def _split_columns(widths: list[int], screen: int, boxed: Callable[[list[int]], int],
                   bare: Callable[[list[int]], int], key: list[int] | None = None
                   ) -> tuple[list[list[int]], bool]:
    """The other columns, packed in order into tables that each start with the key columns
    and fit `screen`: boxed if that takes no more tables than without lines.
    ([], _) when even one column beside the key does not fit."""
    key = key or [0]
    if len(widths) < len(key) + 2:
        return [], False
    others = [i for i in range(len(widths)) if i not in key]

    def pack(width_of: Callable[[list[int]], int]) -> list[list[int]]:
        parts: list[list[int]] = []
        current = list(key)
        for i in others:
            if width_of([*current, i]) <= screen:
                current.append(i)
                continue
            if len(current) == len(key) or width_of([*key, i]) > screen:
                return []
            parts.append(current)
            current = [*key, i]
        return [*parts, current]

    with_lines, without = pack(boxed), pack(bare)
    if with_lines and len(with_lines) <= len(without):
        return with_lines, True
    return without, False


def _show_table(names: list[str], cells: list[list[str]], numeric: list[bool],
                title: str | None, shown: list[int], lines: Box | None, width: int,
                fold: set[int] | None = None) -> None:
    from rich.cells import cell_len
    from rich.table import Table
    from rich.text import Text

    # Text, not markup: a run tagged `[bold]` or a qrels set named `:thumbs_up:` is shown as
    # is. A title wider than the table would wrap inside it: it goes on its own lines instead.
    inside = bool(title) and cell_len(title or "") <= width
    if title and not inside:
        _show_title(title)
    table: Table = Table(title=Text(title) if title and inside else None,
                         header_style="bold underline" if lines is None else "bold",
                         box=lines, pad_edge=lines is not None)
    for i in shown:
        table.add_column(Text(names[i]), justify="right" if numeric[i] else "left",
                         overflow="fold", no_wrap=i not in (fold or ()))
    for row in cells:
        table.add_row(*(Text(row[i]) for i in shown))
    console.print(table, emoji=False, soft_wrap=True)


def _show_title(title: str) -> None:
    from rich.text import Text

    for line in _wrap_at_spaces(title, console.width):
        console.print(Text(line, style="table.title"), soft_wrap=True, emoji=False,
                      highlight=False)


def _show_records(names: list[str], cells: list[list[str]], title: str | None,
                  screen: int) -> bool:
    """Each row as a block of `field: value` lines, a blank line between rows. A value too
    wide beside its field goes on the next line, indented; free text wraps at spaces. False
    (and nothing printed) when a value without spaces is wider than that."""
    from rich.cells import cell_len
    from rich.text import Text

    label = max((cell_len(name) for name in names), default=0) + 2  # `name: `
    indent = 2

    def widest(value: str) -> int:  # what cannot be broken: the longest word
        return max(cell_len(word) for word in value.split(" "))

    blocks: list[list[Text]] = []
    for row in cells:
        block = []
        for name, value in zip(names, row, strict=True):
            head = Text(f"{name}:", style="bold")
            if widest(value) <= screen - label:
                head.append(" " * (label - cell_len(name) - 1))
                wrapped = _wrap_at_spaces(value, screen - label)
                block.append(head.append(wrapped[0]))
                block += [Text(" " * label + more) for more in wrapped[1:]]
            elif widest(value) <= screen - indent:
                block.append(head)
                block += [Text(" " * indent + line)
                          for line in _wrap_at_spaces(value, screen - indent)]
            else:
                return False
        blocks.append(block)
    if title:
        _show_title(title)
    for n, block in enumerate(blocks):
        if n or title:
            console.print()
        for line in block:
            console.print(line, soft_wrap=True, emoji=False, highlight=False)
    return True


def _wrap_at_spaces(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` cells, broken only at spaces (a word wider than
    `width` keeps a line of its own, whole)."""
    from rich.cells import cell_len

    lines: list[str] = []
    current: str | None = None
    for word in text.split(" "):
        if current is None:
            current = word
        elif cell_len(current) + 1 + cell_len(word) <= width:
            current += " " + word
        else:
            lines.append(current.rstrip())
            current = word
    return [*lines, current or ""]


def _print_plain(columns: list[str], cells: list[list[str]], numeric: list[bool],
                 title: str | None) -> None:
    from rich.cells import cell_len

    widths = [max([cell_len(c), *(cell_len(row[i]) for row in cells)])
              for i, c in enumerate(columns)]

    def line(values: Sequence[str]) -> str:
        padded = [" " * (w - cell_len(v)) + v if right else v + " " * (w - cell_len(v))
                  for v, w, right in zip(values, widths, numeric, strict=True)]
        return "  ".join(padded).rstrip()

    out = [title] if title else []
    out += [line(columns), line(["-" * w for w in widths]), *(line(row) for row in cells)]
    sys.stdout.write("\n".join(out) + "\n")


def _is_number(text: str) -> bool:
    cleaned = text.replace(",", "").replace("%", "").lstrip("+-−").rstrip(BELOW_PIVOT_MARK)
    if cleaned in ("–", ""):
        return True
    try:
        float(cleaned)
    except ValueError:
        return False
    return True


def format_cell(value: Any) -> str:
    """A value as a table shows it: 4 decimals, – for none, control characters escaped."""
    if value is None:
        return "–"
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        return f"{value:.4f}"
    if isinstance(value, Enum):
        return terminal_text(str(value.value))
    return terminal_text(str(value))


def topics_said(topics: str | None) -> str:
    """How a title names a topic selection: nothing for all topics, `core topics`, or
    `topic set NAME` (a set's name is the user's, so it is said as a set)."""
    if topics in (None, "all"):
        return ""
    return " · core topics" if topics == "core" else f" · topic set {terminal_text(topics)}"
