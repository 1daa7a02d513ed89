"""Untrusted text (document texts, queries, run tags, names) as data in every output context:
one rule per context, all of them here.

* terminal (tables, messages): control characters as escapes — `terminal_text`;
* JSON on the terminal: what `json.dumps` leaves raw, as \\uXXXX — `json_text`;
* a paper table's cell: control characters as `\\xNN` — `visible_controls`;
* Markdown text, and text at a line's start: syntax backslash-escaped, no block can start —
  `markdown_text`, `markdown_line`;
* a line of an HTML comment (`<!-- … -->`): no `--`, controls as spaces — `html_comment_line`;
* LaTeX text: the specials escaped, glyphs spelt out — `latex_text`;
* a LaTeX comment line (`% …`): controls as spaces, no line break — `latex_comment_line`;
* a CSV/TSV cell for spreadsheets: a formula start gets a leading `'` — `csv_cell` (and
  `csv_plain`, which undoes it when tcdb reads its own file back);
* Markdown shown by a Streamlit element: escaped, a word that would be linked anyway as a
  code span — `streamlit_text`, `streamlit_code`.

Why one module: a rule kept in two places drifts (the terminal's and the paper tables' control
characters were two copies of one pattern), and a reviewer checks one file. Formats read by
programs (TREC, JSONL, BEIR qrels) keep the exact text and use none of these.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "CONTROL", "FORMULA_STARTS", "csv_cell", "csv_plain", "html_comment_line", "json_text",
    "latex_comment_line", "latex_text", "markdown_line", "markdown_text", "streamlit_code",
    "streamlit_text", "terminal_text", "visible_controls",
]

# What data must never write raw where a person reads it: C0 controls (ESC starts the
# sequences that clear a screen or colour text, BEL rings, NUL, backspace, tab, newline), DEL,
# C1 controls (U+009B is a one-character CSI on some terminals), the Unicode line and paragraph
# separators, and the bidirectional overrides and isolates that reorder what is shown.
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# Inside JSON strings: C0 controls are escaped by `json.dumps` already, the rest are not.
_JSON_CONTROL = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


# ---- terminal and JSON --------------------------------------------------------------------

def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def terminal_text(text: str) -> str:
    """`text` with every control character shown as its escape (`\\x1b`, `\\n`, `\\u202e`), so
    a value from the data can neither move the cursor, clear the screen, colour the text nor
    break a line or an alignment. Everything else, backslashes included, is left as it is."""
    return CONTROL.sub(_escape, text)


def json_text(text: str) -> str:
    """Serialised JSON with the characters `json.dumps(ensure_ascii=False)` leaves raw (DEL, C1,
    line separators, bidirectional controls) as `\\uXXXX`: they occur only inside strings,
    where the escape is the same character."""
    return _JSON_CONTROL.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def visible_controls(text: str) -> str:
    """Control characters as `\\xNN`: a paper table's cell, Markdown's and LaTeX's base."""
    return CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


# ---- Markdown and HTML comments -------------------------------------------------------------

# Inline syntax of CommonMark/GFM and Pandoc's Markdown: code, emphasis, links and images, HTML
# and autolinks, entities, table cells, strikethrough and Pandoc's sub/superscript and math.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~^$&])")
# Where a single character turns text into a link or a citation: GFM links bare `http://`,
# `www.` and `user@host` addresses, Pandoc reads `@key` as a citation, GitHub `:name:` as
# an emoji; escaping that character leaves the text as it was.
_MD_LINKS = re.compile(r"(?i):(?=//)|(?<=\bwww)\.|@|:(?=[a-z0-9_+-]+:)")
# What starts a block at a line's start (a note under the table): heading, quote, list
# (1. a) (a) i.), rule or setext underline, Pandoc's definition, table and title lines.
_MD_BLOCK = re.compile(r"^(?:[-+*#>=:|%]|\(?[0-9A-Za-z]{1,9}[.)])")


def markdown_text(text: str) -> str:
    """Data as Markdown text (GitHub and Pandoc): every character Markdown would read as syntax
    backslash-escaped — which both render as the character itself — so a name is never a
    link, an image, HTML, emphasis, a table cell or math; control characters as escapes."""
    text = _MD_SPECIAL.sub(r"\\\1", visible_controls(text))
    return _MD_LINKS.sub(lambda m: "\\" + m.group(), text)


def markdown_line(text: str) -> str:
    """`markdown_text` for text at the start of a line (a note): also no block may start
    there (`- x`, `# x`, `1. x`, `> x`…); leading spaces (a code block) are dropped."""
    text = markdown_text(text.lstrip())
    block = _MD_BLOCK.match(text)
    if block is None:
        return text
    end = block.end() - 1  # the character that makes it a block: escape it
    return text[:end] + "\\" + text[end:]


def html_comment_line(line: str) -> str:
    """A line inside an HTML comment (`<!-- … -->`): no `--` can remain, so no name (`-->`,
    `--->`, `--!>`) can end the comment early and turn what follows into live HTML. One pass
    of `replace` is not enough: `--->` becomes `- -->`."""
    line = CONTROL.sub(" ", line)
    while "--" in line:
        line = line.replace("--", "- -")
    return line


# ---- LaTeX ----------------------------------------------------------------------------------

_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
          "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
          "^": r"\textasciicircum{}", "<": r"\textless{}", ">": r"\textgreater{}",
          "|": r"\textbar{}", "[": "{[}", "]": "{]}", "*": "{*}", "`": r"\textasciigrave{}",
          "Δ": r"$\Delta$", "τ": r"$\tau$", "α": r"$\alpha$",
          "−": "$-$", "–": "--", "×": r"$\times$", "…": r"\ldots{}", "≥": r"$\geq$",
          "≤": r"$\leq$", "†": r"\dag{}", "‡": r"\ddag{}", "·": r"$\cdot$", "→": r"$\to$",
          "σ": r"$\sigma$", "≠": r"$\neq$", "±": r"$\pm$", "γ": r"$\gamma$", "§": r"\S{}",
          "κ": r"$\kappa$"}
_LATEX_RE = re.compile("|".join([r"-(?=-)", *(re.escape(k) for k in _LATEX)]))


def latex_text(text: str) -> str:
    """Data as LaTeX text: the ten special characters (`& % $ # _ { } ~ ^ \\`) escaped, and
    what would otherwise not print as typed — `< > |` (OT1 has no such glyphs), `[ ] *` (read
    as an argument of the `\\\\` before a row), `` ` `` and `--` (ligatures) — spelt so it does;
    a few symbols (Δ, τ, α, κ, †) as commands, control characters as visible escapes."""
    return _LATEX_RE.sub(lambda m: _LATEX.get(m.group(), "-{}"), visible_controls(text))


def latex_comment_line(line: str) -> str:
    """The text of a LaTeX comment line (`% …`): a comment ends at the line's end, so a control
    character (a newline, a form feed) that would start a live line becomes a space."""
    return CONTROL.sub(" ", line)


# ---- CSV and TSV for spreadsheets -----------------------------------------------------------

# OWASP's rule against CSV formula injection: a *text* cell that begins with one of these is a
# formula to Excel, LibreOffice and Google Sheets (`=cmd|' /C calc'!A0`, `@SUM(1+1)`); a
# leading single quote makes it text. Numbers stay numbers (`-0.0014`, a text `-1`).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_QUOTE = "'"
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def csv_cell(value: Any) -> Any:
    """The value as a spreadsheet should see it: a text cell a spreadsheet would evaluate gets
    a leading `'`; numbers, and texts that are a plain number, are returned unchanged."""
    if (isinstance(value, str) and value.startswith(FORMULA_STARTS)
            and not _NUMBER.fullmatch(value)):
        return _QUOTE + value
    return value


def csv_plain(text: str) -> str:
    """The text before `csv_cell`: what a reader of a file tcdb wrote (an assessor's judgments
    returned with our columns) takes an id to be."""
    if text.startswith(_QUOTE) and text[1:].startswith(FORMULA_STARTS):
        return text[1:]
    return text


# ---- Markdown in Streamlit's elements -------------------------------------------------------

# Markdown, HTML, emoji (`:x:`), colour (`:red[…]`) and LaTeX (`$`) specials inside a line;
# `-`, `+`, `#`, `>`, `=` and `1.` start a block only at a line's start.
_INLINE_SPECIALS = re.compile(r"([\\`*_~\[\]<>&$:|!])")
_LINE_START = re.compile(r"^([-+#>=]|\d+[.)])")
# Streamlit turns `:material/x:` into an icon by rewriting the source before it parses it: an
# escaped slash keeps the text.
_ICON = re.compile(r"(?i)(?<=material)/")
# Where escaping is not enough: after parsing, GFM links a bare address (`http://`, `www.`,
# `a@b.c`) and Streamlit draws `:material_x:` / `:name:` in the text, escaped or not. A word
# holding one is shown as an inline code span instead, which neither touches.
_TRANSFORMED_ANYWAY = re.compile(r"(?i)://|www\.|@[\w-]+\.[\w-]|:[\w+-]+:")


def streamlit_text(text: object) -> str:
    """Text from the data (a name, query, description, error naming them) as literal text in a
    Streamlit element that renders Markdown — titles, captions, alerts, labels, metrics, help.

    `![x](http://host/pixel.png)` would fetch a remote image on page load, `[text](url)` become
    a link. Every special is backslash-escaped and line breaks become spaces; a word Markdown
    would link (or Streamlit draw as an icon) however it is escaped is shown in an inline code
    span. The page shows, and a reader copies, exactly the text — no invisible character is
    added. Tables, charts, `st.text` and `st.code` show text as it is.
    """
    words = [streamlit_code(word) if _TRANSFORMED_ANYWAY.search(word) else
             _ICON.sub("\\/", _INLINE_SPECIALS.sub(r"\\\1", word))
             for word in str(text).split()]
    line = " ".join(words)
    return _LINE_START.sub(lambda m: m.group(1)[:-1] + "\\" + m.group(1)[-1], line)


def streamlit_code(text: object) -> str:
    """Text from the data as an inline code span (a command naming a collection, a qrels set):
    nothing inside a code span is Markdown; its fence is longer than any backtick run in it."""
    line = " ".join(str(text).split())
    fence = "`" * (max((len(run) for run in re.findall(r"`+", line)), default=0) + 1)
    pad = " " if line.startswith("`") or line.endswith("`") else ""
    return f"{fence}{pad}{line}{pad}{fence}"
