"""The kill suite's figures at the end of the session: each test records its row as a user
property, which reaches this hook from pytest-xdist workers too."""

from __future__ import annotations

import json

import pytest

from tests.reliability.refusals import World, build_world

_ROWS: list[dict[str, object]] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call":
        _ROWS.extend(json.loads(str(value)) for name, value in report.user_properties
                     if name == "kill_figures")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _ROWS:
        return
    from tests.reliability.test_kill import format_table

    rows = sorted(_ROWS, key=lambda r: (str(r["operation"]), str(r["database"])))
    terminalreporter.write_sep("=", "kill suite: figures per operation and database")
    terminalreporter.write_line(format_table(rows))


# The starting database of the input-class tests (`tests.reliability.refusals`); a module that
# needs another one defines its own `world`.
@pytest.fixture(scope="module")
def world(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> World:
    return build_world(database_url, tmp_path_factory.mktemp("world"))


@pytest.fixture
def use_db(database_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The module's database made the default for one test."""
    monkeypatch.setenv("TCDB_DATABASE_URL", database_url)
    return database_url
