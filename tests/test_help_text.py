"""Every command's `--help` wraps its description at the terminal's width: no line of it ends
where the next word would still have fitted (a docstring's own line break shown as it is)."""

from __future__ import annotations

import pytest

from tcdb.cli.derive import help_paragraphs
from tcdb.operations import all_operations

WIDTH = 80
COMMANDS = sorted(" ".join(op.command) for op in all_operations().values() if op.command)


def _description(text: str) -> list[str]:
    """The lines between the usage line and the first box."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if "Usage:" in line) + 1
    end = next(i for i, line in enumerate(lines) if line.lstrip().startswith("╭"))
    return [line.rstrip() for line in lines[start:end]]


@pytest.mark.parametrize("command", COMMANDS, ids=COMMANDS)
def test_a_commands_description_wraps_at_the_terminals_width(command: str) -> None:
    from typer.testing import CliRunner

    from tcdb.cli.app import app

    result = CliRunner().invoke(app, [*command.split(), "--help"],
                                env={"COLUMNS": str(WIDTH), "TERM": "dumb"})
    assert result.exit_code == 0, result.output
    lines = _description(result.output)
    assert any(lines), result.output
    for line, following in zip(lines, lines[1:], strict=False):
        if line.strip() and following.strip() and not following.strip().startswith(
                ("-", "•", "*")) and not following.strip()[:2].rstrip(".").isdigit():
            word = following.split()[0]
            assert len(line) + 1 + len(word) > WIDTH - 2, (
                f"`tcdb {command} --help` breaks a line early:\n{line}\n{following}")


def test_help_paragraphs_join_lines_but_keep_lists() -> None:
    doc = "First line\nand its end.\n\nWhy: a reason\ngoes on.\n\n- a list\n- kept"
    assert help_paragraphs(doc) == ("First line and its end.\n\nWhy: a reason goes on.\n\n"
                                    "- a list\n- kept")
