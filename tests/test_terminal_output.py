"""Terminal tables never cut a name or a number: piped, they are plain aligned text as wide as
they need; on a narrow terminal, a cell wraps instead of ending in '…'."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from tcdb.cli import output

LONG = "noisy-decaying-dense-retriever-with-a-very-long-run-tag"
ROWS = [(LONG, 0.123456789, 1234567), ("bm25", None, 12)]


def test_piped_tables_are_plain_and_whole(capsys: pytest.CaptureFixture[str]) -> None:
    output.print_table(["run", "AP", "documents"], ROWS, title="c / s")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "c / s"
    assert lines[1].split() == ["run", "AP", "documents"]
    assert lines[3].split() == [LONG, "0.1235", "1234567"]
    assert lines[4].split() == ["bm25", "–", "12"]
    assert len({len(line) for line in lines[1:]}) == 1  # aligned, numbers to the right
    assert "…" not in "\n".join(lines)


def test_a_narrow_terminal_wraps_instead_of_cutting(monkeypatch: pytest.MonkeyPatch) -> None:
    screen = io.StringIO()
    monkeypatch.setattr(output, "console", Console(file=screen, force_terminal=True, width=40,
                                                   color_system=None))
    output.print_table(["run", "AP", "documents"], ROWS)
    text = screen.getvalue()
    assert "…" not in text
    assert "0.1235" in text and "1234567" in text
    # Too wide for boxes: plain columns two spaces apart, the long name folded over lines.
    assert "│" not in text
    width = text.splitlines()[1].index("  ")  # the first column's, from its first row
    first_column = "".join(line[:width].strip() for line in text.splitlines()[1:])
    assert first_column == LONG + "bm25"  # folded over lines, every character there


def test_a_table_that_fits_keeps_its_boxes(monkeypatch: pytest.MonkeyPatch) -> None:
    screen = io.StringIO()
    monkeypatch.setattr(output, "console", Console(file=screen, force_terminal=True, width=100,
                                                   color_system=None))
    output.print_table(["run", "AP", "documents"], ROWS)
    rows = [line for line in screen.getvalue().splitlines() if line.startswith("│")]
    assert [r.split("│")[1].strip() for r in rows] == [LONG, "bm25"]


def _command_paths() -> list[list[str]]:
    import typer

    from tcdb.cli.app import app

    root = typer.main.get_command(app)
    ctx = typer.Context(root)

    def walk(command: typer.core.TyperGroup, path: list[str]) -> list[list[str]]:
        found = [path]
        if hasattr(command, "list_commands"):  # the root loads its groups on demand
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                if sub is not None:
                    found += walk(sub, [*path, name])
        return found

    return walk(root, [])


def test_help_reads_as_a_person_writes_it(cli) -> None:
    """No Python types (`<bool>`, `<list[str]>`), no braces: `COLLECTION SNAPSHOT FILES...`,
    `--json` alone, `--date YYYY-MM-DD`."""
    paths = _command_paths()
    assert len(paths) > 40
    for path in paths:
        code, out, err = cli(*path, "--help")
        assert code == 0, (path, err)
        for odd in ("<bool>", "<str>", "<int>", "<list", "<Path>", "{"):
            assert odd not in out, (path, odd)
    _, out, _ = cli("run", "import", "--help")
    assert "Usage: tcdb run import [OPTIONS] COLLECTION SNAPSHOT FILES..." in " ".join(
        out.split())
    assert "YYYY-MM-DD" in out and "--json" in out


def test_cells_are_text_not_markup(monkeypatch: pytest.MonkeyPatch) -> None:
    screen = io.StringIO()
    monkeypatch.setattr(output, "console", Console(file=screen, force_terminal=True, width=100,
                                                   color_system=None))
    output.print_table(["run"], [("[bold]run :thumbs_up:",)], title="[i]c[/i]")
    assert "[bold]run :thumbs_up:" in screen.getvalue()
    assert "[i]c[/i]" in screen.getvalue()


def test_p_values_keep_their_size() -> None:
    """A p-value below 0.0001 shows its order of magnitude, never a bare 0.0000."""
    from tcdb.cli.output import format_p

    assert [format_p(p) for p in (0.04321, 1e-4, 3.14e-9, 0.0, 1.0, None, float("nan"))] == [
        "0.0432", "0.0001", "3.1e-09", "0.0000", "1.0000", "–", "–"]
