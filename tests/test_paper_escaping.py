"""Paper tables with hostile names (issue 31): what a reader of the rendered Markdown (GitHub /
Pandoc) or LaTeX sees is the literal text of the data — no link, image, HTML, emphasis, code,
math, citation, extra table cell or block — and a caption says exactly what it was given.

The Markdown oracle is markdown-it-py (CommonMark with GFM tables, the renderer rich uses);
the LaTeX oracle is the meaning LaTeX gives its text-mode commands, written out here."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from typing import Any

import pytest

from tcdb.operations.paper import PaperTable, to_latex, to_markdown

HOSTILE = [
    "![x](http://127.0.0.1:9/p.png)", "[t](u)", "<b>bold</b>", "*x*", "_y_", "**z**",
    "`code`", "a|b", "~~gone~~", "$x^2$", "&lt;", "\\*", "http://127.0.0.1:9/a",
    "www.example.org", "a@b.org", "@smith04", ":smile:", "H~2~O", "x^2^", "<!-- c -->",
    "50% & #1 {b} [c]", "a--b---c", "[@key]", "\\textbf{x}", "line\nbreak",
]
NOTES = ["- item", "# head", "1. one", "(a) two", "> quote", "===", "    indented code",
         "+ plus", ": definition", "| cell |", "% title", "a. list"]


def _visible(name: str) -> str:
    """What a cell must show: the text itself, a control character as its escape."""
    return name.replace("\n", "\\x0a")


def _table() -> PaperTable:
    rows = [[name, f"sys {i}", i / 100] for i, name in enumerate(HOSTILE)]
    return PaperTable(columns=["run", "system *of* [x](y)", "nDCG@10"], rows=rows,
                      figures={"nDCG@10": True}, caption="Caption with " + " ".join(HOSTILE),
                      notes=NOTES, groups=["<i>group</i> _g_"] * len(rows))


class _Html(HTMLParser):
    """Tags used and the text of every cell, paragraph by paragraph."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.cells: list[str] = []
        self.paragraphs: list[str] = []
        self._cell: list[str] | None = None
        self._paragraph: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        if tag in ("td", "th"):
            self._cell = []
        if tag == "p":
            self._paragraph = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.cells.append("".join(self._cell))
            self._cell = None
        if tag == "p" and self._paragraph is not None:
            self.paragraphs.append("".join(self._paragraph))
            self._paragraph = None

    def handle_data(self, data: str) -> None:
        for part in (self._cell, self._paragraph):
            if part is not None:
                part.append(data)

    def handle_comment(self, data: str) -> None:
        self.tags.add("!--")


def _render(markdown: str) -> _Html:
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark").enable("table").render(markdown)
    parsed = _Html()
    parsed.feed(html)
    return parsed


def test_markdown_shows_hostile_names_as_their_text() -> None:
    table = _table()
    markdown = to_markdown(table)
    html = _render(markdown)
    # only the table's own structure: bold best values, group rows in italics, line breaks
    assert html.tags <= {"table", "thead", "tbody", "tr", "th", "td", "p", "strong", "em",
                         "br", "!--"}, html.tags
    width = len(table.columns)
    cells = [html.cells[i:i + width] for i in range(0, len(html.cells), width)]
    assert cells[0] == ["run", "system *of* [x](y)", "nDCG@10"]
    body = [row for row in cells[1:] if row[0] != "<i>group</i> _g_"]
    assert [row[0] for row in body] == [_visible(n) for n in HOSTILE]
    assert [row[1] for row in body] == [f"sys {i}" for i in range(len(HOSTILE))]
    assert html.paragraphs[0] == "Table: " + _visible(table.caption)
    notes = html.paragraphs[-1].split("\n")
    assert notes == [note.lstrip() for note in NOTES]


def _unescaped(text: str, char: str) -> int:
    """How often `char` occurs without a backslash escaping it."""
    return len(re.findall(r"(?<!\\)(?:\\\\)*" + re.escape(char), text))


def test_markdown_leaves_nothing_github_or_pandoc_would_read_as_syntax() -> None:
    """What markdown-it does not parse: GFM's bare-address links, Pandoc's math, citations,
    sub- and superscripts, GitHub's emoji — each trigger escaped in the source."""
    body = to_markdown(_table()).split("<!-- lineage")[0]
    for char in "$^~@":
        assert _unescaped(body, char) == 0, char
    assert "http://" not in body and "www." not in body
    assert not re.search(r"(?<!\\):smile:", body)  # GitHub's emoji shortcode


# What LaTeX prints for each text-mode spelling latex_text may use (the LaTeX kernel's).
LATEX_MEANS = {r"\textbackslash{}": "\\", r"\&": "&", r"\%": "%", r"\$": "$", r"\#": "#",
               r"\_": "_", r"\{": "{", r"\}": "}", r"\textasciitilde{}": "~",
               r"\textasciicircum{}": "^", r"\textless{}": "<", r"\textgreater{}": ">",
               r"\textbar{}": "|", r"\textasciigrave{}": "`", "{[}": "[", "{]}": "]",
               "{*}": "*", "-{}": "-"}
LATEX_RE = re.compile("|".join(re.escape(k) for k in LATEX_MEANS))


def _latex_reads(cell: str) -> str:
    """The text LaTeX typesets for a cell: every spelling above decoded; anything else left
    as it is (so a special that slipped through stays visible to the checks)."""
    return LATEX_RE.sub(lambda m: LATEX_MEANS[m.group()], cell)


def _split_cells(row: str) -> list[str]:
    return re.split(r"(?<!\\) & ", row.removesuffix(" \\\\"))


def test_latex_escapes_its_specials_in_every_cell_and_the_caption() -> None:
    table = _table()
    latex = to_latex(table)
    lines = latex.splitlines()
    rows = lines[lines.index("\\midrule") + 1:lines.index("\\bottomrule")]
    data = [r for r in rows if not r.startswith(("\\multicolumn", "\\midrule"))]
    assert len(data) == len(HOSTILE)
    for line, name in zip(data, HOSTILE, strict=True):
        cells = _split_cells(line)
        assert len(cells) == 3, line  # no & of the data became a column
        text = cells[0]
        left = LATEX_RE.sub("", text)
        # nothing LaTeX would read: no special, no ligature, no argument of the \\ before it
        assert not re.search(r"[&%$#_{}~^\\\[\]*<>|`]|--", left), (name, text)
        assert _latex_reads(text) == _visible(name)
    caption = next(x for x in lines if x.startswith("\\caption{"))
    assert _latex_reads(caption.removeprefix("\\caption{").removesuffix("}")) == _visible(
        table.caption)
    header = _split_cells(lines[lines.index("\\toprule") + 1])
    assert [_latex_reads(c) for c in header] == table.columns
    # the lineage and notes cannot end the table: every brace of the document pairs up
    bare = re.sub(r"\\[{}]", "", latex)
    depth = 0
    for char in bare:
        depth += {"{": 1, "}": -1}.get(char, 0)
        assert depth >= 0
    assert depth == 0


@pytest.mark.parametrize("fmt", ["markdown", "latex"])
def test_report_tables_escape_hostile_run_names(fmt: str, hostile_runs: Any) -> None:
    """A compare report over runs named like attacks: the exported table shows each name."""
    from tcdb.operations.paper import render

    result = hostile_runs
    out = render(result.paper_table(), fmt)
    if fmt == "markdown":
        html = _render(out)
        assert html.tags <= {"table", "thead", "tbody", "tr", "th", "td", "p", "strong",
                             "em", "br", "sup", "!--"}, html.tags
        shown = set(html.cells)
    else:
        shown = {_latex_reads(c) for line in out.splitlines() if line.endswith("\\\\")
                 for c in _split_cells(line)}
    assert {r.run for r in result.runs} <= shown


@pytest.fixture
def hostile_runs(db: str, tmp_path: Any) -> Any:
    from tcdb import api
    from tcdb.api import run_import
    from tests.builders import build_snapshot, write_run_file

    docs = {f"d{i}": f"text {i}" for i in range(6)}
    topics = {str(t): f"query {t}" for t in range(1, 6)}
    build_snapshot(tmp_path, "h", "s1", docs, topics, [(t, f"d{t}", 1) for t in topics])
    # run tags hold no whitespace (a TREC run's sixth column)
    for k, tag in enumerate(["![x](http://127.0.0.1:9/p.png)", "*x*_y_", "<b>|&%$#"]):
        rows = [(t, f"d{(int(t) + k) % 6}", 1.0) for t in topics]
        run_import("h", "s1", [write_run_file(tmp_path / "runs", tag, rows, name=f"r{k}.run")])
    return api.compare("h", "s1", measure="P@1", permutations=0)


def test_latex_prints_a_negative_number_with_a_minus_sign() -> None:
    """`-0.1234` in a text-mode tabular prints a hyphen; a paper's minus is `$-$0.1234`
    (a number's sign, the − of a text too), while a name's hyphen stays a hyphen."""
    table = PaperTable(columns=["run", "RΔ", "n", "change"],
                       rows=[["a-b", -0.12344, -3, "−2"], ["c", 0.5, 4, "+1"]],
                       figures={"RΔ": True})
    latex = to_latex(table)
    rows = [line for line in latex.splitlines() if line.endswith("\\\\")][1:]
    assert _split_cells(rows[0]) == ["a-b", "$-$0.1234", "$-$3", "$-$2"]
    assert _split_cells(rows[1])[1] == "\\textbf{0.5000}"
    assert not re.search(r"(^|& )-\d", "\n".join(rows))


COMMENT_BREAKERS = ["-->", "--->", "---->", "--!>", "x-->y", "a--b", "-- >", "<!--",
                    "-->-->", "- -->", "------>"]


@pytest.mark.parametrize("name", COMMENT_BREAKERS)
def test_a_name_cannot_end_the_lineage_comment(name: str) -> None:
    """The lineage is an HTML comment under the Markdown table: a run tag, label, qrels name or
    publication holding `-->` in any spelling stays inside it; the `<img onerror>` after it
    stays text of the comment, not a tag."""
    from tcdb.operations.lineage import Lineage, TopicsLineage

    payload = f"{name}<img src=x onerror=alert(1)><script>alert(2)</script>"
    lineage = Lineage.model_construct(
        collection=payload, runs=[], qrels=[], measures=[], versions={}, schema_revision=None,
        publications=[payload],
        topics=TopicsLineage.model_construct(**{f: None for f in TopicsLineage.model_fields}))
    table = PaperTable(columns=["run"], rows=[["r1"]], lineage=lineage)
    markdown = to_markdown(table)
    comment = markdown[markdown.index("<!-- lineage"):]
    assert comment.count("-->") == 1 and comment.rstrip().endswith("-->"), comment
    parsed = _render(markdown)
    assert not parsed.tags & {"img", "script"}, parsed.tags
