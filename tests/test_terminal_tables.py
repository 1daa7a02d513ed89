"""Trusted terminal tables: on a real terminal (a pseudo-terminal, as `tcdb` sees a person's
screen) a table changes layout rather than split a value or a name, at every width from 60
columns; and control characters from the data (ESC, BEL, NUL, DEL, C1) are shown as escapes,
never written raw, on a terminal or piped."""

from __future__ import annotations

import fcntl
import io
import json
import os
import re
import struct
import subprocess
import sys
import termios
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len
from rich.console import Console

from tcdb.cli import output

WIDTHS = (60, 80, 100, 120)

PERSISTENCE_COLUMNS = ["system", "vs 2024-01", "ARP 2024-01", "ARP", "RΔ", "rel. Δ", "ER",
                       "ΔRI", "p", "p paired", "core"]
PERSISTENCE_ROWS: list[list[Any]] = [
    ["dense-decay (pivot)", "2024-06", 0.3412, 0.3398, -0.0014, "-0.41%", 0.0123, -0.0042,
     "5.17e-10", "automatic", "100,000"],
    ["bm25-rm3", "2024-06", 0.2511, 0.2489, -0.0022, "-0.88%", 0.0456, 0.0031, "0.0432",
     "automatic", "99,871"],
    ["splade-v3-distil", "2024-06", 0.3801, 0.3702, -0.0099, "-2.60%", 0.1001, -0.0153,
     "3.1e-09", "manual", "100,000"],
    ["colbert-v2-prf", "2024-06", 0.3655, 0.3711, 0.0056, "+1.53%", None, 0.0097, "0.2170",
     "automatic", "12,345"],
    ["dense-decay", "2024-06", 0.3399, 0.2901, -0.0498, "-14.65%", 0.2210, -0.0612, "5.17e-10",
     "automatic", "100,000"],
]
PERSISTENCE_TITLE = "robust04 · AP · pivot dense-decay (pivot) · snapshots 2024-01 → 2024-06"

# A free-text column wider than any screen here: only a record a field a line fits.
CHANGES_COLUMNS = ["run", "status", "documents", "what"]
CHANGES_ROWS: list[list[Any]] = [
    ["dense-decay-with-a-rather-long-run-tag-v2", "updated", "100,000",
     "metadata changed: description, submitted date, and the free-text notes of the run, "
     "which a lab writes at length when it submits its runs to the campaign"],
    ["bm25", "new", "12", "–"],
]

TABLES = {
    "persistence": (PERSISTENCE_COLUMNS, PERSISTENCE_ROWS, PERSISTENCE_TITLE),
    "changes": (CHANGES_COLUMNS, CHANGES_ROWS, "robust04 / 2024-06"),
}

SNIPPET = """
import json, sys
from tcdb.cli.output import print_table
spec = json.loads(sys.argv[1])
print_table(spec["columns"], spec["rows"], title=spec["title"])
"""
SGR = re.compile(rb"\x1b\[[0-9;]*m")  # what rich itself writes: bold, underline, colours
BOX = re.compile("[\u2500-\u257f]")


def on_terminal(width: int, columns: list[str], rows: list[list[Any]],
                title: str | None) -> bytes:
    """What `print_table` writes to a pseudo-terminal `width` columns wide: the raw bytes."""
    spec = json.dumps({"columns": columns, "rows": rows, "title": title})
    return run_on_terminal(width, [sys.executable, "-c", SNIPPET, spec])


def run_on_terminal(width: int, argv: list[str], env_extra: dict[str, str] | None = None,
                    timeout: float = 60) -> bytes:
    """What the program `argv` writes to a pseudo-terminal `width` columns wide (stdin and
    stdout on the terminal, as on a person's screen): the raw bytes. Shared with
    test_report_commands_pty.py."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, width, 0, 0))
    env = {k: v for k, v in os.environ.items()
           if k not in ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE",
                        "JUPYTER_COLUMNS", "LINES")}
    env.update(COLUMNS=str(width), TERM="xterm-256color", **(env_extra or {}))
    process = subprocess.Popen(argv, stdin=slave, stdout=slave,
                               stderr=subprocess.PIPE, env=env, close_fds=True)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the program ended, its end of the terminal is closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    _, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, err.decode()
    return b"".join(chunks)


def screen_text(raw: bytes) -> str:
    """The text a person sees: rich's own styling taken out; nothing else may be a control."""
    text = SGR.sub(b"", raw).decode().replace("\r\n", "\n")
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f]", text), repr(text)
    return text


def piped(capsys: pytest.CaptureFixture[str], columns: list[str], rows: list[list[Any]],
          title: str | None) -> str:
    capsys.readouterr()
    output.print_table(columns, rows, title=title)
    return capsys.readouterr().out


def tokens(text: str) -> Counter[str]:
    """Words of a rendering, box lines taken out; a field's label `p paired:` also counts as
    the column name it is."""
    found: Counter[str] = Counter()
    for word in BOX.sub(" ", text).split():
        found[word] += 1
        if word.endswith(":") and len(word) > 1:
            found[word[:-1]] += 1
    return found


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", sorted(TABLES))
def test_no_value_or_name_is_split_on_a_terminal(name: str, width: int,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    columns, rows, title = TABLES[name]
    plain = piped(capsys, columns, rows, title)
    lines = plain.splitlines()
    expected = tokens("\n".join(line for i, line in enumerate(lines) if i != 2))
    text = screen_text(on_terminal(width, columns, rows, title))
    shown = tokens(text)
    missing = {word: n for word, n in expected.items() if shown[word] < n}
    assert not missing, f"split or lost at {width} columns: {missing}\n{text}"
    assert max(cell_len(line) for line in text.splitlines()) <= width, text
    assert "…" not in text


def test_layouts_from_wide_to_narrow() -> None:
    """Without lines when boxes do not fit; then tables of a few columns that each start with
    the system; boxed again when that takes no more tables."""
    columns, rows, title = TABLES["persistence"]
    wide = screen_text(on_terminal(130, columns, rows, title))
    assert "┃" not in wide and "│" not in wide
    assert [line.split()[0] for line in wide.splitlines()[1:]] == [
        "system", *(r[0].split()[0] for r in rows)]
    for width, parts in ((100, 2), (80, 2), (60, 3)):
        text = screen_text(on_terminal(width, columns, rows, title))
        assert text.count("splade-v3-distil") == parts, text
        assert f"({parts}/{parts})" in text
        for column in columns:
            assert column in text


def test_a_split_table_repeats_what_names_each_row() -> None:
    """Persistence over several later snapshots has a row per (system, snapshot): no name
    tells the rows apart alone. Every part of the split table starts with both, never with a
    figure whose values happen to differ (80 columns repeated `ARP` and no system)."""
    columns = ["system", "snapshot", "ARP 2022-06", "ARP", "RΔ", "relative change", "ER", "ΔRI",
               "p"]
    rows = [[system, later, 0.3371 + k / 10, 0.3584 + k / 10 + j / 100, -0.0213, -0.0632,
             1.0615, -0.0005, "0.4254"]
            for k, system in enumerate(["bm25 (pivot)", "dense-decay", "rerank-rise"])
            for j, later in enumerate(["2022-07", "2022-09"])]
    text = screen_text(on_terminal(80, columns, rows, "persistence"))
    assert "(2/2)" in text, text
    for part in text.split("\n\n"):
        lines = [line for line in part.splitlines() if "┃" in line or "│" in line]
        assert lines[0].split("┃")[1:3] == [" system       ", " snapshot "], text
        assert [line.split("│")[1].strip() for line in lines[1:]] == [r[0] for r in rows], text
    assert output._key_columns([["c", "a", "1.0"], ["c", "b", "2.0"]],
                               [False, False, True]) == [1]  # a run list's run
    assert output._key_columns([["4", "x"], ["5", "x"]], [True, False]) == [0]  # a topic id


def test_free_text_wraps_at_spaces_in_records(capsys: pytest.CaptureFixture[str]) -> None:
    columns, rows, title = TABLES["changes"]
    text = screen_text(on_terminal(80, columns, rows, title))
    lines = text.splitlines()
    assert lines[0] == title
    assert "run:       dense-decay-with-a-rather-long-run-tag-v2" in lines
    assert "documents: 100,000" in lines
    what = [i for i, line in enumerate(lines) if line.startswith("what:")][0]
    words = []
    for line in lines[what:]:
        if line.strip() == "" or (line[0] != " " and not line.startswith("what:")):
            break
        words += line.removeprefix("what:").split()
    assert " ".join(words) == rows[0][3]


def test_a_name_wider_than_the_screen_folds_as_a_last_resort() -> None:
    """Only what cannot fit anywhere is broken: the 90-character name folds, the figures beside
    it stay whole."""
    screen = io.StringIO()
    long = "x" * 90
    columns = ["run", "AP", "documents", "p", "p paired", "type"]
    rows = [(long, 0.5, "100,000", "5.17e-10", "0.0432", "automatic"),
            ("bm25", 0.25, "99,871", "3.1e-09", "–", "manual")]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(output, "console", Console(file=screen, force_terminal=True, width=60,
                                                 color_system=None))
        output.print_table(columns, rows)
    text = screen.getvalue()
    lines = text.splitlines()
    assert "".join(line.split()[0] for line in lines[1:] if line.strip()).startswith(long)
    shown = tokens(text)
    for word in ["AP", "documents", "p", "paired", "type", "0.5000", "100,000", "5.17e-10",
                 "0.0432", "automatic", "0.2500", "99,871", "3.1e-09", "manual"]:
        assert shown[word] >= 1, (word, text)
    assert max(cell_len(line) for line in lines) <= 60


# Control characters -------------------------------------------------------------------------

EVIL = "evil\x1b[2J\x1b[5;41mred\x07bell\x00nul\x7fdel\x9bcsi\u202eflip\ttab\nline"
SHOWN = "evil\\x1b[2J\\x1b[5;41mred\\x07bell\\x00nul\\x7fdel\\x9bcsi\\u202eflip\\ttab\\nline"
RAW = [b"\x1b[2J", b"\x1b[5;41m", b"\x07", b"\x00", b"\x7f", "\x9b".encode(),
       "\u202e".encode(), b"\t"]


def test_safe_text() -> None:
    assert output.terminal_text(EVIL) == SHOWN
    assert output.terminal_text("C:\\runs\\bm25 · Δ τ ✓") == "C:\\runs\\bm25 · Δ τ ✓"
    assert output.format_cell("a\x1bb") == "a\\x1bb"


@pytest.mark.parametrize("width", (60, 120))
def test_control_characters_never_reach_the_terminal_raw(width: int) -> None:
    raw = on_terminal(width, ["run", "status\x1b[2J"], [[EVIL, "ok"], ["bm25", "ok"]],
                      f"title {EVIL}")
    for bad in RAW:
        assert bad not in raw, bad
    assert b"\x1b" not in SGR.sub(b"", raw)  # any ESC left is rich's own bold
    text = screen_text(raw)
    assert SHOWN in text and "status\\x1b[2J" in text


def test_control_characters_are_escaped_when_piped(capsys: pytest.CaptureFixture[str]) -> None:
    text = piped(capsys, ["run", "status\x07"], [[EVIL, "ok"]], f"title {EVIL}")
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e]", text), repr(text)
    lines = text.splitlines()
    assert lines[0] == f"title {SHOWN}"
    assert lines[1].split() == ["run", "status\\x07"]
    assert lines[3].split() == [SHOWN, "ok"]


def test_json_escapes_every_control_character(capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    output.print_json({"run": EVIL})
    text = capsys.readouterr().out
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202e]", text), repr(text)
    assert json.loads(text) == {"run": EVIL}


def test_errors_show_control_characters_as_escapes(monkeypatch: pytest.MonkeyPatch) -> None:
    from tcdb.cli.app import print_error

    screen = io.StringIO()
    monkeypatch.setattr(output, "err_console", Console(file=screen, force_terminal=True,
                                                       width=80, color_system="truecolor"))
    print_error(f"no run {EVIL!s}")
    raw = screen.getvalue().encode()
    for bad in RAW:
        assert bad not in raw, bad
    lines = SGR.sub(b"", raw).decode().rstrip("\n").splitlines()
    # nothing in the data breaks the line: the escaped name is whole on one line, and the
    # terminal's 80 columns wrap the error only at its spaces
    assert any(SHOWN in line for line in lines)
    assert " ".join(line.strip() for line in lines) == f"error: no run {SHOWN}"


def test_run_list_shows_a_hostile_system_name_as_text(db: str, cli, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """`tcdb run list`, piped and on a terminal: a system name holding ESC sequences neither
    clears the screen nor colours the text. No input of tcdb takes such a name (the name rule
    refuses control characters); a database written by other means can hold one, so it is set
    here in SQL. (PostgreSQL text holds no NUL: not in this one.)"""
    from sqlalchemy import text

    from tcdb.api import run_import
    from tcdb.errors import FieldError
    from tcdb.operations import Database
    from tests.builders import build_snapshot, write_run_file

    system = "sys\x1b[2J\x1b[5;41mred\x07bell\x7fdel\x9bcsi"
    shown = "sys\\x1b[2J\\x1b[5;41mred\\x07bell\\x7fdel\\x9bcsi"
    build_snapshot(tmp_path, "c", "s", {"d1": "a b", "d2": "c d"}, {"1": "a", "2": "c"})
    run_file = write_run_file(tmp_path / "runs", "evil", [("1", "d1", 2.0), ("2", "d2", 1.0)])
    with pytest.raises(FieldError, match="system: a name cannot contain U\\+001B"):
        run_import("c", "s", [run_file], system=system)
    run_import("c", "s", [run_file], system="plain")
    with Database().engine().begin() as conn:
        conn.execute(text("UPDATE system SET name = :name WHERE name = 'plain'"),
                     {"name": system})
    code, out, err = cli("run", "list")
    assert code == 0, err
    assert shown in out and "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    screen = io.StringIO()
    monkeypatch.setattr(output, "console", Console(file=screen, force_terminal=True, width=80,
                                                   color_system="truecolor"))
    code, _, err = cli("run", "list")
    assert code == 0, err
    raw = screen.getvalue().encode()
    for bad in RAW:
        assert bad not in raw, bad
    assert b"\x1b" not in SGR.sub(b"", raw)
    assert shown in SGR.sub(b"", raw).decode()
