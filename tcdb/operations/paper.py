"""Tables for papers: one `PaperTable` per result, rendered as Markdown, LaTeX (booktabs) or CSV.

Why one model: every report exports the same way (`--format markdown|latex|csv`), as ranx's
reports do — the best value of each figure column in bold, significance as superscript marks
whose test, level and correction the caption names, and the lineage (`tcdb.operations.lineage`)
as a comment block so a number in a paper can be traced back. `Result.paper_table()` derives a
plain table from `to_frame()`; reports with significance tests override it.
"""

from __future__ import annotations

import csv
import io
import math
import re
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from tcdb.escaping import (
    csv_cell,
    html_comment_line,
    latex_comment_line,
    latex_text,
    markdown_line,
    markdown_text,
    visible_controls,
)
from tcdb.operations.lineage import Lineage
from tcdb.vocabulary import format_p

if TYPE_CHECKING:
    import pandas as pd

FORMATS = ("table", "markdown", "latex", "csv")


class PaperTable(BaseModel):
    """What a paper's table shows.

    `rows` hold values (numbers unrounded, text, None); `figures` names the columns where a
    best value is bolded, True where higher is better; `marks[i][column]` are superscript marks
    of row i (letters, `*`, `†`, `‡`), explained in `notes`; `groups[i]` starts a block of rows
    (a measure) whose best values are compared among themselves; `p_columns` are p-values.
    """

    columns: list[str]
    rows: list[list[Any]]
    figures: dict[str, bool] = Field(default_factory=dict)
    marks: list[dict[str, str]] = Field(default_factory=list)
    groups: list[str | None] = Field(default_factory=list)
    p_columns: list[str] = Field(default_factory=list)
    caption: str = ""
    notes: list[str] = Field(default_factory=list)
    label: str = "tab:tcdb"
    digits: int = 4
    lineage: Lineage | None = None

    def mark(self, row: int, column: str) -> str:
        return self.marks[row].get(column, "") if row < len(self.marks) else ""

    def group(self, row: int) -> str | None:
        return self.groups[row] if row < len(self.groups) else None

    def best(self) -> set[tuple[int, str]]:
        """(row, column) of the best value of each figure column within each group, compared
        as shown (rounded), so values that print alike tie."""
        found: set[tuple[int, str]] = set()
        for column, higher in self.figures.items():
            if column not in self.columns:
                continue
            j = self.columns.index(column)
            by_group: dict[str | None, list[tuple[float, int]]] = {}
            for i, row in enumerate(self.rows):
                value = _number(row[j])
                if value is not None:
                    by_group.setdefault(self.group(i), []).append(
                        (round(value, self.digits), i))
            for values in by_group.values():
                target = (max if higher else min)(v for v, _ in values)
                found |= {(i, column) for v, i in values if v == target}
        return found

    def text(self, row: int, column: str) -> str:
        """A cell as plain text: numbers to `digits` decimals, p-values as `format_p`."""
        value = self.rows[row][self.columns.index(column)]
        return format_value(value, self.digits, p=column in self.p_columns)

    def footer(self) -> list[str]:
        """Notes, then the measures' trec_eval-version notes."""
        return [*self.notes, *(self.lineage.notes() if self.lineage else [])]


def format_value(value: Any, digits: int = 4, p: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if p:
            return format_p(value)
        return f"{value:.{digits}f}"
    if hasattr(value, "isoformat"):
        return str(value.isoformat())
    return visible_controls(str(getattr(value, "value", value)))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return None if math.isnan(value) or math.isinf(value) else float(value)


def frame_table(frame: pd.DataFrame, caption: str = "", label: str = "tab:tcdb",
                lineage: Lineage | None = None) -> PaperTable:
    """A frame as a paper table; columns named as a measure (`nDCG@10`) are figures where
    higher is better, columns starting with `p` (`p`, `p_value`…) p-values."""
    columns = [str(c) for c in frame.columns]
    rows = [[_plain(v) for v in row] for row in frame.itertuples(index=False)]
    figures = {c: True for c in columns if _is_measure(c)
               and all(_number(r[j]) is not None or r[j] is None
                       for r in rows for j in [columns.index(c)])}
    p_columns = [c for c in columns if c == "p" or c.startswith(("p_", "p "))]
    return PaperTable(columns=columns, rows=rows, figures=figures, p_columns=p_columns,
                      caption=caption, label=label, lineage=lineage)


def _plain(value: Any) -> Any:
    """numpy scalars as Python's, NaN as None."""
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    return None if isinstance(value, float) and math.isnan(value) else value


def lineage_caption(lineage: Lineage | None) -> str:
    """`qrels S/NAME; topics T; measures M`: what every caption names."""
    if lineage is None:
        return ""
    parts = []
    if lineage.qrels:
        parts.append("qrels " + ", ".join(f"{q.snapshot}/{q.name}" for q in lineage.qrels))
    parts.append(f"topics {lineage.topics.selection or 'all'}")
    if lineage.measures:
        parts.append("measures " + ", ".join(m.name for m in lineage.measures))
    return "; ".join(parts)


def _is_measure(name: str) -> bool:
    import ir_measures

    try:
        ir_measures.parse_measure(name)
    except Exception:  # noqa: BLE001 - any name ir_measures cannot parse is no measure
        return False
    return True


# ---- Markdown ---------------------------------------------------------------------------------

def to_markdown(table: PaperTable) -> str:
    """A GitHub/pandoc pipe table: `Table:` caption, bold best, `<sup>` marks, notes below and
    the lineage in an HTML comment."""
    best = table.best()
    numeric = [_numeric_column(table, j) for j in range(len(table.columns))]
    out = []
    if table.caption:
        out += [f"Table: {markdown_text(table.caption)}", ""]
    out.append("| " + " | ".join(markdown_text(c) for c in table.columns) + " |")
    out.append("|" + "|".join("---:" if n else ":---" for n in numeric) + "|")
    previous: str | None = None
    for i in range(len(table.rows)):
        group = table.group(i)
        if group is not None and group != previous:
            out.append("| " + " | ".join([f"*{markdown_text(group)}*"] +
                                         [""] * (len(table.columns) - 1)) + " |")
        previous = group
        cells = []
        for column in table.columns:
            cell = markdown_text(table.text(i, column))
            if (i, column) in best:
                cell = f"**{cell}**"
            mark = table.mark(i, column)
            if mark:
                cell += f"<sup>{markdown_text(mark)}</sup>"
            cells.append(cell)
        out.append("| " + " | ".join(cells) + " |")
    footer = table.footer()
    if footer:
        out += [""] + [markdown_line(note) + "  " for note in footer]
    if table.lineage is not None:
        out += ["", "<!-- lineage"] + [html_comment_line(line) for line in table.lineage.lines()]
        out.append("-->")
    return "\n".join(out) + "\n"


def _numeric_column(table: PaperTable, j: int) -> bool:
    values = [row[j] for row in table.rows if row[j] is not None]
    return bool(values) and all(_number(v) is not None for v in values)


# ---- LaTeX ------------------------------------------------------------------------------------

def to_latex(table: PaperTable) -> str:
    """A booktabs table (`\\usepackage{booktabs}`): \\toprule, \\midrule, \\bottomrule, bold
    best, `\\textsuperscript` marks, notes under the tabular and the lineage as comments."""
    best = table.best()
    numeric = [_numeric_column(table, j) for j in range(len(table.columns))]
    width = len(table.columns)
    out = ["% needs \\usepackage{booktabs}"]
    if table.lineage is not None:
        out += ["% lineage (what these figures were computed from):"]
        out += [f"%   {latex_comment_line(line)}" for line in table.lineage.lines()]
    out += ["\\begin{table}[t]", "\\centering"]
    if table.caption:
        out.append(f"\\caption{{{latex_text(table.caption)}}}")
    out.append(f"\\label{{{_label(table.label)}}}")
    out.append("\\begin{tabular}{" + "".join("r" if n else "l" for n in numeric) + "}")
    out.append("\\toprule")
    out.append(" & ".join(latex_text(c) for c in table.columns) + " \\\\")
    out.append("\\midrule")
    previous: str | None = None
    for i in range(len(table.rows)):
        group = table.group(i)
        if group is not None and group != previous:
            if previous is not None:
                out.append("\\midrule")
            out.append(f"\\multicolumn{{{width}}}{{l}}{{\\emph{{{latex_text(group)}}}}} \\\\")
        previous = group
        cells = []
        for column in table.columns:
            cell = _latex_cell(table.text(i, column), table.rows[i][table.columns.index(column)])
            if (i, column) in best:
                cell = f"\\textbf{{{cell}}}"
            mark = table.mark(i, column)
            if mark:
                cell += f"\\textsuperscript{{{latex_text(mark)}}}"
            cells.append(cell)
        out.append(" & ".join(cells) + " \\\\")
    out += ["\\bottomrule", "\\end{tabular}"]
    footer = table.footer()
    if footer:
        out.append("\\par\\smallskip{\\footnotesize " + " \\\\\n".join(
            latex_text(note) for note in footer) + "}")
    out.append("\\end{table}")
    return "\n".join(out) + "\n"


def _latex_cell(text: str, value: Any) -> str:
    """A cell's text in LaTeX; a negative number's sign as a minus (`$-$0.1234`), not the
    hyphen a plain `-` prints in text mode."""
    if _number(value) is not None and text.startswith("-"):
        return "$-$" + latex_text(text[1:])
    return latex_text(text)


def _label(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9:._-]", "-", label)


# ---- CSV --------------------------------------------------------------------------------------

def to_csv(table: PaperTable) -> str:
    """The table's values unrounded, one column of marks after each marked column; text cells
    a spreadsheet would evaluate neutralised (`tcdb.collections.files.csv_safe`, OWASP's rule)."""

    marked = [c for c in table.columns if any(table.mark(i, c) for i in range(len(table.rows)))]
    header: list[str] = []
    for column in table.columns:
        header.append(column)
        if column in marked:
            header.append(f"{column} marks")
    grouped = any(g is not None for g in table.groups)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([csv_cell(h) for h in (["group", *header] if grouped else header)])
    for i, row in enumerate(table.rows):
        cells: list[Any] = [table.group(i)] if grouped else []
        for column, value in zip(table.columns, row, strict=True):
            cells.append(_csv_value(value))
            if column in marked:
                cells.append(table.mark(i, column))
        writer.writerow([csv_cell(c) for c in cells])
    return buffer.getvalue()


def _csv_value(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    return format_value(value)


def render(table: PaperTable, fmt: str) -> str:
    """`fmt`: markdown, latex or csv."""
    renderers = {"markdown": to_markdown, "latex": to_latex, "csv": to_csv}
    return renderers[fmt](table)
