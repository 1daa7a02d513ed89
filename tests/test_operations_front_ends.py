"""Every operation is one definition: the CLI, the API and the flows are derived from it.

For each registered operation: the CLI command at its path takes exactly the request's fields
(as flags by the one rule, plus `--json` and the command's declared CLI-only extras), the API
function of the same name takes exactly the same fields, a Prefect task exists for it, and its
result type defines `to_frame`.
"""

from __future__ import annotations

import inspect

import pytest
import typer.main

from tcdb.operations import Result, all_operations

OPERATIONS = all_operations()


def _click_command(path: tuple[str, ...]):  # type: ignore[no-untyped-def]
    from tcdb.cli.app import app

    command = typer.main.get_command(app)
    for name in path:
        command = command.get_command(typer.Context(command), name)  # type: ignore[attr-defined]
    return command


def test_the_registry_is_not_empty() -> None:
    assert len(OPERATIONS) >= 2


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_cli_options_are_the_request_fields(name: str) -> None:
    from tcdb.cli.derive import flag_of, is_argument

    op = OPERATIONS[name]
    command = _click_command(op.command)
    params = {p.name: p for p in command.params}
    for field_name, field in op.request.model_fields.items():
        assert field_name in params, f"{' '.join(op.command)} lacks field {field_name}"
        param = params[field_name]
        if is_argument(field):
            assert param.param_type_name == "argument"
        else:
            assert flag_of(field_name, field) in param.opts  # type: ignore[attr-defined]
    assert "json_output" in params


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_api_parameters_are_the_request_fields(name: str) -> None:
    import tcdb

    op = OPERATIONS[name]
    function = getattr(tcdb.api, name)
    parameters = list(inspect.signature(function).parameters)
    assert parameters == [*op.request.model_fields, "database"]


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_a_flow_task_exists(name: str) -> None:
    from tcdb.flows.tasks import TASKS

    assert TASKS[name].name == "-".join(OPERATIONS[name].command)


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_every_result_has_its_own_frame(name: str) -> None:
    result = OPERATIONS[name].result
    assert result.to_frame is not Result.to_frame, f"{result.__name__} lacks to_frame"


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_every_field_has_help(name: str) -> None:
    for field_name, field in OPERATIONS[name].request.model_fields.items():
        assert field.description, f"{name}.{field_name} has no help text"


def test_errors_name_the_field_in_the_api_and_the_flag_in_the_cli(cli) -> None:  # type: ignore[no-untyped-def]
    import tcdb
    from tcdb.errors import FieldError

    with pytest.raises(FieldError) as raised:
        tcdb.api.persistence("c", snapshots="2022-06", pivot="bm25")
    assert str(raised.value) == "snapshots: name at least two snapshots"
    code, _, err = cli("report", "persistence", "c", "--snapshots", "2022-06", "--pivot", "b")
    assert code != 0 and "--snapshots: name at least two snapshots" in err


def test_one_label_is_a_list_of_one() -> None:
    from tcdb.reports.persistence import PersistenceRequest

    request = PersistenceRequest.of(collection="c", snapshots=["a", "b"], pivot="p",
                                    measures="AP")
    assert request.measures == ["AP"]


def test_the_documented_table_of_operations_is_current() -> None:
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    table = subprocess.run([sys.executable, str(root / "tools" / "operations_table.py")],
                           capture_output=True, text=True, check=True).stdout
    assert table in (root / "docs" / "operations.md").read_text(encoding="utf-8"), (
        "docs/operations.md: run tools/operations_table.py and paste its table")
