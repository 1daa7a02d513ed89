"""`tcdb --help` and each command's own help say the same summary (issue 42: 6 of 11 group
summaries had drifted from the groups' help)."""

from __future__ import annotations

import importlib
import inspect

import pytest

from tcdb.cli.commands import COMMANDS


@pytest.mark.parametrize("entry", COMMANDS, ids=[entry[2] for entry in COMMANDS])
def test_the_root_help_and_the_command_say_the_same(entry: tuple[str, ...]) -> None:
    module_name, attribute, name, _, summary = entry
    module = importlib.import_module(f"tcdb.cli.{module_name}")
    command = getattr(module, attribute)
    own = command.info.help if attribute == "app" else inspect.getdoc(command)
    first_paragraph = " ".join((own or "").split("\n\n")[0].split())
    assert first_paragraph == summary, name
