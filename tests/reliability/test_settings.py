"""Issue 41, class 7: settings and flow parameters, each checked in one place.

Every `TCDB_*` setting is read by `tcdb.settings` before any command runs, and a bad one is one
line naming the variable, its value and what it accepts; a variable one typo away from a setting
is refused, not ignored. `tcdb flows run NAME --param k=v` checks each value against the flow
function's annotation (`tcdb.flows.parameters`) before the flow starts. An unreachable Dask
scheduler is said in one line within seconds (`tcdb.flows.dask_runner.reach_scheduler`).
"""

from __future__ import annotations

import datetime as dt
import socket

import pytest

from tests.reliability.rows import database_state

pytestmark = pytest.mark.slow

SETTINGS = [
    ("TCDB_READERS", "abc", "TCDB_READERS='abc': must be a whole number ≥ 1"),
    ("TCDB_READERS", "-3", "TCDB_READERS='-3': must be a whole number ≥ 1"),
    ("TCDB_READERS", "0", "TCDB_READERS='0': must be a whole number ≥ 1"),
    ("TCDB_READER", "bogus", "TCDB_READER='bogus': must be 'auto', 'process' or 'thread'"),
    ("TCDB_MAX_LINE_BYTES", "abc", "TCDB_MAX_LINE_BYTES='abc': must be a whole number > 0"),
    ("TCDB_MAX_EXPANSION_RATIO", "0", "TCDB_MAX_EXPANSION_RATIO='0': must be a whole number > 0"),
    ("TCDB_ECHO_SQL", "maybe", "TCDB_ECHO_SQL='maybe': must be true or false (1/0, yes/no, "
     "on/off)"),
    ("TCDB_DASK_ADDRESS", "garbage", "TCDB_DASK_ADDRESS='garbage': must be `local`, or a "
     "scheduler's address such as tcp://host:8786"),
    ("TCDB_DASK_ADDRESS", "http://host:8786", "TCDB_DASK_ADDRESS='http://host:8786': must be "
     "`local`, or a scheduler's address such as tcp://host:8786"),
    ("TCDB_DASK_ADDRESS", "tcp://host", "TCDB_DASK_ADDRESS='tcp://host': must be `local`, or a "
     "scheduler's address such as tcp://host:8786"),
    ("TCDB_READRES", "2", "TCDB_READRES is not a tcdb setting: did you mean TCDB_READERS? (the "
     "settings are TCDB_DATABASE_URL, TCDB_ECHO_SQL, TCDB_MAX_EXPANDED_BYTES, "
     "TCDB_MAX_EXPANSION_RATIO, TCDB_MAX_LINE_BYTES, TCDB_DASK_ADDRESS, TCDB_READER, "
     "TCDB_READERS)"),
]


def _one_line(code: int, err: str) -> str:
    assert code == 1, err
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0].removeprefix("error: ")


@pytest.mark.parametrize(("variable", "value", "message"), SETTINGS,
                         ids=[f"{v}={x}" for v, x, _ in SETTINGS])
def test_a_bad_setting_is_one_line_before_any_command(
        variable: str, value: str, message: str, db: str, cli,
        monkeypatch: pytest.MonkeyPatch) -> None:
    before = database_state(db)
    monkeypatch.setenv(variable, value)
    for argv in (["run", "list"], ["collection", "add", "x"], ["flows", "list"]):
        assert _one_line(*cli(*argv)[::2]) == message, argv
    assert database_state(db) == before


def test_good_settings_are_taken(db: str, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    from tcdb.settings import get_settings

    for variable, value in (("TCDB_READERS", "2"), ("TCDB_READER", "Thread"),
                            ("TCDB_DASK_ADDRESS", "127.0.0.1:8786"), ("TCDB_KILL_SEED", "7")):
        monkeypatch.setenv(variable, value)
    settings = get_settings()
    assert (settings.readers, settings.reader) == (2, "thread")
    assert settings.dask_address == "tcp://127.0.0.1:8786"
    assert cli("run", "list")[0] == 0


PARAMETERS = [
    ("evaluate", ["measures=42"],
     "--param: measures=42: must be a list of text, or null (flow 'evaluate')"),
    ("evaluate", ['measures=["AP", 3]'],
     '--param: measures=["AP", 3]: must be a list of text, or null (flow \'evaluate\')'),
    ("evaluate", ["all_qrels=1"],
     "--param: all_qrels=1: must be true or false (flow 'evaluate')"),
    ("evaluate", ['all_qrels="yes"'],
     "--param: all_qrels=\"yes\": must be true or false (flow 'evaluate')"),
    ("evaluate", ["dask=garbage"],
     "--param: dask=\"garbage\": must be `local`, or a scheduler's address such as "
     "tcp://host:8786 (flow 'evaluate')"),
    ("evaluate", ["mesures=[]"],
     "--param: flow 'evaluate' has no parameter 'mesures' (parameters: collection, snapshot, "
     "qrels, measures, runs, all_qrels, dask)"),
    ("simulate-pools", ["collection=c", "snapshot=s1", 'budgets=["ten"]'],
     "--param: budgets=[\"ten\"]: 'ten' is not a budget (a whole number ≥ 1) "
     "(flow 'simulate-pools')"),
    ("simulate-pools", ["collection=c"],
     "--param: flow 'simulate-pools' needs snapshot=…, budgets=…"),
    ("ingest-snapshot", ["collection=c", "snapshot=x", "date=2022-13-01"],
     "--param: date=\"2022-13-01\": must be a date (YYYY-MM-DD), or null "
     "(flow 'ingest-snapshot')"),
]


@pytest.mark.parametrize(("flow", "params", "message"), PARAMETERS,
                         ids=[f"{f}-{p[-1]}" for f, p, _ in PARAMETERS])
def test_a_bad_flow_parameter_is_one_line_before_the_flow_runs(
        flow: str, params: list[str], message: str, db: str, cli) -> None:
    before = database_state(db)
    argv = ["flows", "run", flow, *[a for p in params for a in ("--param", p)]]
    assert _one_line(*cli(*argv)[::2]) == message
    assert database_state(db) == before


def test_parameters_come_as_the_flow_takes_them() -> None:
    from tcdb.flows.deployments import load_flow
    from tcdb.flows.parameters import accepts, check_parameters

    checked = check_parameters(load_flow("ingest-snapshot"),
                               {"collection": "c", "snapshot": "x", "date": "2022-06-01",
                                "docs": "docs.jsonl"})
    assert checked["request"].date == dt.date(2022, 6, 1)
    checked = check_parameters(load_flow("evaluate"), {"dask": "127.0.0.1:8786"})
    assert checked == {"dask": "tcp://127.0.0.1:8786"}
    assert accepts(list[int] | None) == "a list of whole numbers, or null"


def _closed_port() -> int:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        return int(listener.getsockname()[1])


def test_an_unreachable_scheduler_is_one_line() -> None:
    from tcdb.errors import TcdbError
    from tcdb.flows.dask_runner import reach_scheduler

    port = _closed_port()
    with pytest.raises(TcdbError) as caught:
        reach_scheduler(f"tcp://127.0.0.1:{port}")
    assert str(caught.value) == (
        f"no Dask scheduler at tcp://127.0.0.1:{port} (connection refused; waited at most "
        "5 s): start one there, or set TCDB_DASK_ADDRESS (or the flow's `dask` parameter) to "
        "a running scheduler's address, or to `local`")


def test_the_evaluate_flow_says_an_unreachable_scheduler_in_one_line(
        cli, db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through `tcdb flows run` (a Prefect flow run): the error line, Prefect's log lines, no
    traceback."""
    port = _closed_port()
    monkeypatch.setenv("TCDB_DASK_ADDRESS", f"127.0.0.1:{port}")
    code, _out, err = cli("flows", "run", "evaluate")
    assert code == 1 and "Traceback" not in err, err
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert errors == [f"error: no Dask scheduler at tcp://127.0.0.1:{port} (connection "
                      "refused; waited at most 5 s): start one there, or set TCDB_DASK_ADDRESS "
                      "(or the flow's `dask` parameter) to a running scheduler's address, or to "
                      "`local`"], err
