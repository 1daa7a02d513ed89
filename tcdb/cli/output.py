"""Shared output helpers: rich tables for people, `--json` for scripts, one-line errors."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable, Sequence
from datetime import date, datetime
from enum import Enum
from typing import Any

from rich.console import Console

console = Console(soft_wrap=True)
err_console = Console(stderr=True)


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


def _clean(value: Any) -> Any:
    """NaN and infinities become null: JSON has no spelling for them."""
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        return _clean(value.item())
    return value


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(_clean(obj), default=_default, indent=2, ensure_ascii=False))
    sys.stdout.write("\n")


def print_table(
    columns: Sequence[str], rows: Iterable[Sequence[Any]], title: str | None = None
) -> None:
    """A table that never cuts a name or a number: boxed for a terminal, without lines when
    the boxes would not fit (a cell still too wide for the screen wraps), plain aligned text
    when piped (as wide as it needs)."""
    cells = [[format_cell(v) for v in row] for row in rows]
    numeric = [bool(cells) and all(_is_number(row[i]) for row in cells)
               for i in range(len(columns))]
    if not console.is_terminal:
        _print_plain([str(c) for c in columns], cells, numeric, title)
        return
    from rich import box
    from rich.cells import cell_len
    from rich.table import Table
    from rich.text import Text

    def build(lines: box.Box | None) -> Table:
        # Text, not markup: a run tagged `[bold]` or a qrels set named `:thumbs_up:` is shown
        # as is. Without lines, two spaces part the columns, as in the piped table.
        table = Table(title=Text(title) if title else None, header_style="bold underline"
                      if lines is None else "bold", box=lines, pad_edge=lines is not None)
        for column, right in zip(columns, numeric, strict=True):
            table.add_column(Text(column), overflow="fold", justify="right" if right else "left")
        for row in cells:
            table.add_row(*(Text(cell) for cell in row))
        return table

    widths = [max([cell_len(str(column)), *(cell_len(row[i]) for row in cells)])
              for i, column in enumerate(columns)]
    boxed = sum(widths) + 3 * len(widths) + 1  # a cell's padding and border, one edge more
    # Too wide with borders: without them each cell keeps 3 more columns before it folds.
    console.print(build(box.HEAVY_HEAD if boxed <= console.width else None), emoji=False)


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
    cleaned = text.replace(",", "").replace("%", "").lstrip("+-−")
    if cleaned in ("–", ""):
        return True
    try:
        float(cleaned)
    except ValueError:
        return False
    return True


def format_p(value: float | None) -> str:
    """A p-value as a lab reads it: 4 decimals, and below 0.0001 two significant digits
    (`3.1e-09`), never a bare 0.0000 that hides how small it is."""
    if value is None or math.isnan(value):
        return "–"
    return f"{value:.4f}" if value >= 1e-4 or value == 0 else f"{value:.1e}"


def format_cell(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        return f"{value:.4f}"
    if isinstance(value, Enum):
        return str(value.value)
    return str(value)
