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
    from rich.table import Table

    table = Table(title=title, header_style="bold")
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*[format_cell(v) for v in row])
    console.print(table)


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
