"""Each output context's one rule (`tcdb.escaping`), on hostile strings, with the expected text
written out by hand."""

from __future__ import annotations

from tcdb import escaping


def test_terminal_text() -> None:
    assert escaping.terminal_text("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m"
    assert escaping.terminal_text("a\nb\tc\rd") == "a\\nb\\tc\\rd"
    assert escaping.terminal_text("abc\u202edcba") == "abc\\u202edcba"
    assert escaping.terminal_text("\x9b2J") == "\\x9b2J"
    assert escaping.terminal_text("back\\slash café") == "back\\slash café"


def test_json_text() -> None:
    assert escaping.json_text('{"a": "x\u2028y\u202e"}') == '{"a": "x\\u2028y\\u202e"}'
    assert escaping.json_text('{"a": "plain"}') == '{"a": "plain"}'


def test_visible_controls() -> None:
    assert escaping.visible_controls("a\x00b\x1b") == "a\\x00b\\x1b"


def test_markdown() -> None:
    assert escaping.markdown_text("![x](http://h/p.png)") == "!\\[x\\](http\\://h/p.png)"
    assert escaping.markdown_text("| pipe") == "\\| pipe"
    assert escaping.markdown_text("<script>") == "\\<script\\>"
    assert escaping.markdown_text("a@b") == "a\\@b"
    assert escaping.markdown_line("- item") == "\\- item"
    assert escaping.markdown_line("# title") == "\\# title"
    assert escaping.markdown_line("1. first") == "1\\. first"


def test_html_comment_line() -> None:
    assert escaping.html_comment_line("-->") == "- ->"
    assert escaping.html_comment_line("--->") == "- - ->"
    assert escaping.html_comment_line("a\nb") == "a b"


def test_latex() -> None:
    assert escaping.latex_text("\\input{/etc/passwd}") == \
        "\\textbackslash{}input\\{/etc/passwd\\}"
    assert escaping.latex_text("50% & $5 #1 a_b") == "50\\% \\& \\$5 \\#1 a\\_b"
    assert escaping.latex_text("--") == "-{}-"
    assert escaping.latex_comment_line("a\n\\input{x}") == "a \\input{x}"


def test_csv_cell() -> None:
    assert escaping.csv_cell("=cmd|' /C calc'!A0") == "'=cmd|' /C calc'!A0"
    assert escaping.csv_cell("@SUM(1+1)") == "'@SUM(1+1)"
    assert escaping.csv_cell("-1") == "-1" and escaping.csv_cell(-0.5) == -0.5
    assert escaping.csv_plain("'=cmd") == "=cmd" and escaping.csv_plain("'quoted") == "'quoted"


def test_streamlit() -> None:
    assert escaping.streamlit_text("![x](y)") == "\\!\\[x\\](y)"
    assert escaping.streamlit_text("see http://evil.example now") == \
        "see `http://evil.example` now"
    assert escaping.streamlit_text("- a\nb") == "\\- a b"
    assert escaping.streamlit_code("a`b") == "``a`b``"
