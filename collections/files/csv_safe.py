"""CSV and TSV that tcdb writes for people (pool exports, score tables, per-topic deltas,
dashboard downloads), every cell through the one spreadsheet rule, `tcdb.escaping.csv_cell`.

Document texts, queries and run tags are untrusted: a cell `=cmd|' /C calc'!A0` or `@SUM(1+1)`
is a formula to Excel, LibreOffice and Google Sheets (CSV formula injection). OWASP's rule: a
*text* cell that begins with `=`, `+`, `-`, `@`, tab or carriage return gets a leading single
quote, which spreadsheets read as "this is text"; the csv module quotes cells holding the
separator, quotes or line breaks. Numbers stay numbers (a float `-0.0014`, a text `-1`), since
a spreadsheet reads them as the same number. Formats read by programs (TREC, JSONL, JSON, BEIR
qrels) keep the exact text and do not come here.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO, Any

import pandas as pd

from tcdb.escaping import csv_cell


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy whose text cells and column names are neutralised; numeric columns untouched."""
    out = frame.copy()
    for name in out.columns:
        column = out[name]
        if not (pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column)
                or pd.api.types.is_datetime64_any_dtype(column)):
            out[name] = column.map(csv_cell)
    out.columns = [csv_cell(name) for name in out.columns]
    return out


def frame_csv(frame: pd.DataFrame, target: str | Path | IO[str] | None = None, *,
              sep: str = ",") -> str | None:
    """`frame.to_csv` without the index, cells neutralised: the text when `target` is None."""
    return safe_frame(frame).to_csv(target, index=False, sep=sep)


def write_csv(rows: Iterable[Sequence[Any]], target: str | Path | IO[str] | None = None, *,
              header: Sequence[str] | None = None, delimiter: str = ",",
              lineterminator: str = "\n") -> str:
    """Write `header` and `rows`, every cell neutralised, to a path or an open text stream;
    returns the text written (also when `target` is None, which writes nothing)."""
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, delimiter=delimiter, lineterminator=lineterminator)
    if header is not None:
        writer.writerow([csv_cell(name) for name in header])
    for row in rows:
        writer.writerow([csv_cell(value) for value in row])
    text = buffer.getvalue()
    if isinstance(target, str | Path):
        from tcdb.collections.files.opening import write_output

        write_output(target, text.encode("utf-8"))  # whole or not at all, failures one line
    elif target is not None:
        target.write(text)
    return text
