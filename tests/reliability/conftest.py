"""The kill suite's figures at the end of the session: each test records its row as a user
property, which reaches this hook from pytest-xdist workers too."""

from __future__ import annotations

import json

import pytest

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
