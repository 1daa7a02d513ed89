"""How the dashboard's tables show their columns: the field's words as headers, and one number
format per column — 4 decimals for scores, p-values as the CLI prints them
(`tcdb.vocabulary.format_p`: 4 decimals, scientific notation below 1e-4), thousands separators
for counts, a dash for a missing value.

A page describes its columns with these specs (`{"score_a": score("score A")}`) and hands them
to `widgets.table`, which shows only the described columns, in that order; the frame keeps its
own column names, so the CSV and the tests see the report's fields unchanged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd
import streamlit as st

from tcdb.vocabulary import format_change
from tcdb.vocabulary import format_p as format_p  # the CLI's rule for a p-value, re-exported

Kind = Literal["text", "count", "signed", "score", "p", "decimal", "percent", "progress", "flag",
               "time"]
MISSING = "–"


@dataclass(frozen=True)
class Col:
    """One shown column: its header, what kind of figure it holds, a tooltip, a width."""

    label: str
    kind: Kind = "text"
    help: str | None = None
    width: Literal["small", "medium", "large"] | int | None = None
    digits: int = 1  # for `decimal`


def text(label: str, help: str | None = None, width: Any = None) -> Col:
    return Col(label, "text", help, width)


def count(label: str, help: str | None = None, width: Any = None) -> Col:
    return Col(label, "count", help, width)


def signed(label: str, help: str | None = None, width: Any = None) -> Col:
    """A whole number with its sign (+3, 0, −2): a change in rank."""
    return Col(label, "signed", help, width)


def score(label: str, help: str | None = None, width: Any = None) -> Col:
    return Col(label, "score", help, width)


def p_value(label: str = "p", help: str | None = None, width: Any = None) -> Col:
    return Col(label, "p", help, width)


def decimal(label: str, digits: int = 1, help: str | None = None, width: Any = None) -> Col:
    return Col(label, "decimal", help, width, digits)


def percent(label: str, help: str | None = None, width: Any = None) -> Col:
    return Col(label, "percent", help, width)


def progress(label: str, help: str | None = None, width: Any = None) -> Col:
    return Col(label, "progress", help, width)


def flag(label: str, help: str | None = None, width: Any = None) -> Col:
    return Col(label, "flag", help, width)


def time(label: str, help: str | None = None, width: Any = None) -> Col:
    return Col(label, "time", help, width)


def format_signed(value: Any) -> str:
    """A change with its sign: +3, 0, -2 (`tcdb.vocabulary.format_change`; a dash when
    missing)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    return format_change(value)


def _config(spec: Col) -> Any:
    """The st.column_config entry of a spec (p-values: formatted by the Styler instead)."""
    cc = st.column_config
    common: dict[str, Any] = {"help": spec.help, "width": spec.width}
    if spec.kind == "count":
        return cc.NumberColumn(spec.label, format="%,d", **common)
    if spec.kind == "score":
        return cc.NumberColumn(spec.label, format="%.4f", **common)
    if spec.kind == "decimal":
        return cc.NumberColumn(spec.label, format=f"%.{spec.digits}f", **common)
    if spec.kind == "percent":
        return cc.NumberColumn(spec.label, format="percent", **common)
    if spec.kind == "progress":
        return cc.ProgressColumn(spec.label, format="percent", min_value=0.0, max_value=1.0,
                                 color="green", **common)
    if spec.kind == "flag":
        return cc.CheckboxColumn(spec.label, **common)
    if spec.kind == "time":
        return cc.DatetimeColumn(spec.label, format="YYYY-MM-DD HH:mm", **common)
    return cc.Column(spec.label, **common)


def styled(frame: pd.DataFrame, specs: dict[str, Col]) -> tuple[Any, dict[str, Any], list[str]]:
    """(data for st.dataframe, its column_config, the column order) for these specs.

    The Styler only formats what st.column_config cannot: p-values (two notations in one
    column), signed changes (+3, 0, −2) and missing values (a dash, never "None" or "nan");
    sorting still uses the numbers.
    """
    shown = [c for c in specs if c in frame.columns]
    config = {c: _config(specs[c]) for c in shown}
    formats = {"p": format_p, "signed": format_signed}
    by_styler = {c: formats[specs[c].kind] for c in shown if specs[c].kind in formats}
    data = frame.style.format(by_styler, na_rep=MISSING) if len(frame) else frame
    return data, config, shown
