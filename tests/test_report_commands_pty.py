"""Every report command on a real terminal: what `tcdb …` prints piped, token by token, is on a
pseudo-terminal 60, 80, 100 and 120 columns wide too, each token whole (a table changes layout
rather than split a value, a name or a heading).

One seeded SQLite database per module (`seed_collection`, plus the source-bias corpus, a topic
set and submission dates so that every report has data). Each layout is one real process: the
commands run one after another in a single `tcdb.cli.app.run` driver (the import of tcdb is
most of a command's time), piped once and on a pseudo-terminal at each width.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.cells import cell_len

from tcdb.operations import all_operations
from tests.builders import Seeded
from tests.databases import create_database
from tests.test_terminal_tables import WIDTHS, run_on_terminal, screen_text, tokens

pytestmark = pytest.mark.slow

SNAPSHOTS = ["-s", "2024-01", "-s", "2024-02", "-s", "2024-03"]
POOL = "2024-03-depth10"
# Every report of the registry (`op.command[0] == "report"`) needs an entry here or in SKIPPED.
REPORTS: dict[tuple[str, ...], list[str]] = {
    ("report", "reusability"): ["dash", "2024-03", "--qrels", "original", "--vs", "expanded"],
    ("report", "leave-out"): ["dash", "2024-03", "--depth", "5"],
    ("report", "agreement"): [POOL, "--vs", "expanded"],
    ("report", "judge-agreement"): ["dash", "2024-03", "--vs", "expanded", "--measure", "AP",
                                    "--bootstrap", "20"],
    ("report", "source-bias"): ["cocktail", "s1"],
    ("report", "documents-by-source"): ["cocktail"],
    ("report", "persistence"): ["dash", *SNAPSHOTS, "--pivot", "bm25"],
    ("report", "per-topic-deltas"): ["dash", *SNAPSHOTS, "--pivot", "bm25"],
    ("report", "ranking-agreement"): ["dash", "--system", "bm25", "-s", "2024-01",
                                      "-s", "2024-03"],
    ("report", "topic-deltas"): ["dash", "--system", "bm25", "-s", "2024-01", "-s", "2024-03"],
    ("report", "compare"): ["dash", "2024-03", "-m", "AP"],
    ("report", "leaderboard"): ["dash", "2024-03", "-m", "AP"],
    ("report", "subset"): ["dash", "2024-03", "--topics", "sub"],
    ("report", "rankings"): ["dash", *SNAPSHOTS, "-m", "AP"],
    ("report", "diff-runs"): ["dash", "2024-03", "bm25", "sys001", "-m", "AP"],
}
SKIPPED: dict[tuple[str, ...], str] = {}  # command → why its data cannot be seeded cheaply
OTHERS: dict[tuple[str, ...], list[str]] = {
    ("scores", "table"): ["dash", "2024-03"],
    # Re-evaluates what the seed evaluated: every score is reused, no figure changes.
    ("evaluate",): ["dash", "2024-03", "-m", "AP", "-m", "nDCG@10", "-m", "P@10"],
    ("snapshot", "diff"): ["dash", "2024-01", "2024-03"],
    ("snapshot", "stats"): ["dash"],
    ("snapshot", "drift"): ["dash"],
    ("run", "list"): [],
    ("qrels", "list"): [],
    ("pool", "show"): [POOL],
    ("literature", "report"): ["dash", "-m", "nDCG@10", "--reference-run", "2024-03/bm25",
                               "--qrels", "original"],
}
COMMANDS = {**REPORTS, **OTHERS}
CASES = [[*command, *args] for command, args in COMMANDS.items()]
NAMES = [" ".join(command) for command in COMMANDS]

MARK = "@@ tcdb-report-case {} @@"
# Runs every case in one process; stdout is whatever it was given (a pipe or the terminal).
DRIVER = f"""
import json, sys
from tcdb.cli.app import run
cases = json.loads(sys.argv[1])
codes = []
for i, argv in enumerate(cases):
    print({MARK!r}.format(i), flush=True)
    codes.append(run(argv))
    sys.stdout.flush()
print({MARK!r}.format("codes"), json.dumps(codes), flush=True)
"""
DURATION = re.compile(r"\d+(\.\d+)?s")  # evaluate's elapsed time differs from run to run
RULE = re.compile(r"-+")  # a piped table's line under its header


def split_cases(text: str) -> list[str]:
    """The driver's output, one text per case, after checking every case exited with 0."""
    head, _, codes = text.partition(MARK.format("codes"))
    assert json.loads(codes) == [0] * len(CASES), f"exit codes {codes.strip()}\n{text}"
    parts = re.split(re.escape(MARK).replace(r"\{\}", r"\d+") + r"\n", head)
    assert len(parts) == len(CASES) + 1, text
    return parts[1:]


@pytest.fixture(scope="module")
def database_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """SQLite only: the layout of a table does not depend on the backend."""
    yield from create_database("sqlite", tmp_path_factory.mktemp("db"))


@pytest.fixture(scope="module")
def screens(seeded_url: tuple[str, Seeded], tmp_path_factory: pytest.TempPathFactory
            ) -> dict[int | None, list[str]]:
    """What every case printed: piped (key None) and on a terminal of each width."""
    from tcdb.cli.app import run
    from tests.source_bias_corpus import ingest_twins

    url, seeded = seeded_url
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TCDB_DATABASE_URL", url)
        ingest_twins(tmp_path_factory.mktemp("twins"))  # source-bias, documents-by-source
        assert run(["topics", "set", "create", "sub", "dash", "2024-03", "--topic", "4",
                    "--topic", "5", "--topic", "6"]) == 0  # subset
        for day, system in enumerate(seeded.systems, start=1):  # leaderboard
            assert run(["run", "update", "dash", "2024-03", system,
                        "--date", f"2023-01-{day:02d}"]) == 0
    argv = [sys.executable, "-c", DRIVER, json.dumps(CASES)]
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR")}
    env.update(TCDB_DATABASE_URL=url, NO_COLOR="1")
    piped = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300,
                           cwd=Path(__file__).parents[1])
    assert piped.returncode == 0, piped.stderr
    found: dict[int | None, list[str]] = {None: split_cases(piped.stdout)}
    for width in WIDTHS:
        raw = run_on_terminal(width, argv, {"TCDB_DATABASE_URL": url, "NO_COLOR": "1"},
                              timeout=300)
        found[width] = split_cases(screen_text(raw))
    return found


def test_every_report_command_is_covered() -> None:
    reports = {op.command for op in all_operations().values() if op.command[0] == "report"}
    assert reports == set(REPORTS) | set(SKIPPED)
    assert not set(REPORTS) & set(SKIPPED)


def expected_tokens(text: str) -> Counter[str]:
    """The piped output's tokens, less its header rules and elapsed times."""
    return Counter({word: n for word, n in tokens(text).items()
                    if not RULE.fullmatch(word) and not DURATION.fullmatch(word)})


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("case", range(len(CASES)), ids=NAMES)
def test_every_token_is_whole_on_a_terminal(screens: dict[int | None, list[str]], case: int,
                                            width: int) -> None:
    plain = screens[None][case]
    expected = expected_tokens(plain)
    assert sum(expected.values()) > 5, f"{NAMES[case]} printed next to nothing:\n{plain}"
    text = screens[width][case]
    shown = tokens(text)
    missing = {word: n for word, n in expected.items() if shown[word] < n}
    assert not missing, f"{NAMES[case]}: split or lost at {width} columns: {missing}\n{text}"
    assert max(cell_len(line) for line in text.splitlines()) <= width, text
