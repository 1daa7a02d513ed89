"""Tables for papers (`--format markdown|latex|csv`) and lineage on every report.

Checksums are recomputed here without tcdb: a run's as the importer documents it (sha256 of the
file's bytes), a qrels set's from its file (sha256 of the sorted `topic\\tdoc\\tgrade` lines),
the schema revision from `alembic heads`.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import select

from tcdb import api
from tcdb.operations import Database
from tcdb.schema import Run, Snapshot
from tests.builders import COLLECTION, Seeded, write_run_file

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = "r_1%&#$"  # every character LaTeX reads as syntax that a run tag can hold


@pytest.fixture(scope="module")
def seeded(seeded_url: tuple[str, Seeded], tmp_path_factory: pytest.TempPathFactory
           ) -> tuple[str, Seeded]:
    """The seeded collection, made the default, with dated runs, a topic set, and a run whose
    tag holds LaTeX's special characters (scored like bm25, so it ties nothing)."""
    import os

    url, seed = seeded_url
    os.environ["TCDB_DATABASE_URL"] = url
    first = seed.labels[0]
    folder = tmp_path_factory.mktemp("hostile")
    bm25 = api.run_export(COLLECTION, first, "bm25", out=folder / "bm25.run")
    rows = [line.split() for line in Path(bm25.out).read_text().splitlines()]
    path = write_run_file(folder, HOSTILE, [(t, d, float(s) * 0.9) for t, _, d, _, s, _ in rows])
    api.run_import(COLLECTION, first, [path])
    for i, tag in enumerate(r.run for r in api.runs(COLLECTION, first).runs):
        api.run_update(COLLECTION, first, [tag], submitted=f"2024-01-{i + 1:02d}")
    api.topic_set_create("some", COLLECTION, first, topic_ids=seed.topics[first][:3])
    yield url, seed
    os.environ.pop("TCDB_DATABASE_URL", None)


def _file_sha256(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _qrels_sha256(path: Path) -> str:
    """From a TREC qrels file: sorted `topic\\tdoc\\tgrade` lines."""
    lines = sorted(f"{t}\t{d}\t{int(g)}\n".encode()
                   for t, _, d, g in (line.split() for line in path.read_text().splitlines()))
    return hashlib.sha256(b"".join(lines)).hexdigest()


def _alembic_head() -> str:
    out = subprocess.run([sys.executable, "-m", "alembic", "heads"], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    return out.split()[0]


def _check(lineage: dict[str, Any], tmp_path: Path, cli: Any) -> None:
    """Every run and qrels checksum recomputed independently; versions and revision named."""
    assert lineage["schema_revision"] == _alembic_head()
    assert lineage["versions"]["ir_measures"] and lineage["versions"]["pytrec_eval"]
    assert lineage["runs"] and lineage["qrels"] and lineage["measures"]
    with Database().session() as session:
        sources = {(label, tag): source for label, tag, source in session.exec(
            select(Snapshot.label, Run.tag, Run.source).join(
                Snapshot, Snapshot.id == Run.snapshot_id))}  # type: ignore[arg-type]
    for run in lineage["runs"]:
        assert run["checksum"] == _file_sha256(sources[run["snapshot"], run["run"]]), run
    for qrels in lineage["qrels"]:
        out = tmp_path / f"{qrels['snapshot']}-{qrels['name']}.qrels"
        code, _, err = cli("qrels", "export", COLLECTION, qrels["snapshot"], qrels["name"],
                           "--out", out)
        assert code == 0, err
        assert qrels["checksum"] == _qrels_sha256(out)
        assert qrels["n_judgments"] == len(out.read_text().splitlines())


def test_lineage_in_json_of_every_report(seeded: tuple[str, Seeded], cli: Any,
                                         tmp_path: Path) -> None:
    _, seed = seeded
    first, last = seed.labels[0], seed.labels[-1]
    commands = [
        ["report", "persistence", COLLECTION, "--snapshots", first, last, "--pivot", "bm25"],
        ["report", "reusability", COLLECTION, last, "--qrels", "original", "--vs", "expanded"],
        ["report", "compare", COLLECTION, first, "-m", "AP", "--permutations", "0"],
        ["report", "leaderboard", COLLECTION, first, "-m", "AP", "--permutations", "10"],
        ["report", "leave-out", COLLECTION, last, "--qrels", "original", "--depth", "5"],
        ["report", "subset", COLLECTION, first, "--topics", "some", "-m", "AP",
         "--samples", "100"],
        ["report", "topic-deltas", COLLECTION, "--system", "bm25", "--snapshots", first, last,
         "-m", "AP"],
        ["evaluate", COLLECTION, first, "-m", "AP", "-m", "IPrec@0.1"],
    ]
    for command in commands:
        code, out, err = cli(*command, "--json")
        assert code == 0, (command, err)
        lineage = json.loads(out)["lineage"]
        _check(lineage, tmp_path, cli)
    # the measure known to differ between trec_eval 9 and 10 says so
    assert any("trec_eval 10" in (m["note"] or "") for m in lineage["measures"]
               if m["name"] == "IPrec@0.1")
    # scores' --json stays the list of rows it always was; the API result has the lineage
    scores = api.scores(COLLECTION, first, measures=["AP"])
    assert scores.lineage is not None
    _check(scores.lineage.model_dump(), tmp_path, cli)
    subset = api.subset_ci(COLLECTION, first, topics="some", bootstrap=10)
    assert subset.lineage is not None and subset.lineage.topics.n_members == 3


def _rows(latex: str) -> list[list[str]]:
    body = latex.split("\\midrule\n", 1)[1].split("\\bottomrule")[0]
    return [[c.strip() for c in line.removesuffix(" \\\\").split(" & ")]
            for line in body.splitlines() if " & " in line]


def _balanced(text: str) -> bool:
    depth = 0
    for i, char in enumerate(text):
        if char in "{}" and (i == 0 or text[i - 1] != "\\"):
            depth += 1 if char == "{" else -1
            if depth < 0:
                return False
    return depth == 0


def test_compare_as_latex_markdown_and_csv(seeded: tuple[str, Seeded], cli: Any) -> None:
    _, seed = seeded
    first = seed.labels[0]
    # six topics: a lenient level so that some pairs are significant
    args = ["report", "compare", COLLECTION, first, "-m", "AP", "--permutations", "0",
            "--alpha", "0.5", "--correction", "bonferroni"]
    result = json.loads(cli(*args, "--json")[1])
    code, latex, err = cli(*args, "--format", "latex")
    assert code == 0, err
    tabular = "\n".join(line for line in latex.splitlines() if not line.startswith("%"))
    assert _balanced(tabular)
    for rule in ("\\toprule", "\\midrule", "\\bottomrule", "\\begin{tabular}",
                 "\\end{tabular}"):
        assert tabular.count(rule) == 1
    assert "r\\_1\\%\\&\\#\\$" in tabular and HOSTILE not in tabular
    caption = re.search(r"\\caption\{(.*)\}\n", tabular).group(1)  # type: ignore[union-attr]
    for word in ("AP", "qrels original", "every judged topic", "paired t-test",
                 "Bonferroni", "p \\textless{} 0.5"):
        assert word in caption
    rows = _rows(tabular)
    runs = [r["run"] for r in result["runs"]]
    letters = {run: row[0] for run, row in zip(runs, rows, strict=True)}
    means = {r["run"]: r["mean"] for r in result["runs"]}
    best = max(means.values())
    for run, row in zip(runs, rows, strict=True):
        cell = row[3]
        assert cell.startswith("\\textbf{") == (round(means[run], 4) == round(best, 4))
        marks = re.search(r"\\textsuperscript\{(\w+)\}", cell)
        expected = {letters[p["run_b"] if p["run_a"] == run else p["run_a"]]
                    for p in result["pairs"] if run in (p["run_a"], p["run_b"])
                    and p["p_t_corrected"] is not None and p["p_t_corrected"] < result["alpha"]
                    and means[run] > means[p["run_b"] if p["run_a"] == run else p["run_a"]]}
        assert set(marks.group(1) if marks else "") == expected, run
    assert any(re.search(r"\\textsuperscript", row[3]) for row in rows)
    assert "% lineage" in latex and "sha256" in latex
    # the versions line reads in one pair of parentheses, not `(9.0.x semantics (embedded …))`
    versions = next(x for x in latex.splitlines() if "pytrec_eval" in x)
    assert "(trec_eval 9.0.x, as embedded in pytrec_eval)" in versions
    assert _depth(versions) == 1

    code, markdown, _ = cli(*args, "--format", "markdown")
    assert code == 0
    assert markdown.startswith("Table: Mean AP")
    # & (an entity's start) and $ (Pandoc's and GitHub's math) escaped as _ is: shown as typed
    assert "r\\_1%\\&#\\$" in markdown and "**" in markdown and "<!-- lineage" in markdown
    code, text, _ = cli(*args, "--format", "csv")
    table = list(csv.reader(io.StringIO(text)))
    assert table[0][:4] == ["#", "run", "system", "AP"] and len(table) == len(runs) + 1
    code, _, err = cli(*args, "--format", "latex", "--json")
    assert code != 0 and "--json" in err


def test_persistence_paper_marks_and_bold(seeded: tuple[str, Seeded], cli: Any) -> None:
    _, seed = seeded
    first, last = seed.labels[0], seed.labels[-1]
    args = ["report", "persistence", COLLECTION, "--snapshots", first, last, "--pivot", "bm25",
            "-m", "AP"]
    result = json.loads(cli(*args, "--json")[1])
    code, latex, err = cli(*args, "--format", "latex")
    assert code == 0, err
    assert _balanced("\n".join(x for x in latex.splitlines() if not x.startswith("%")))
    assert "unpaired t-test" in latex and "no correction" in latex and "qrels" in latex
    rows = {row[0].removesuffix(" (pivot)"): row for row in _rows(latex)}
    systems = result["measures"]["AP"]["systems"]
    best = max(round(s["arp"][last], 4) for s in systems)
    for record in systems:
        cell = rows[record["system"]][2]
        assert cell.startswith("\\textbf{") == (round(record["arp"][last], 4) == best)
        significant = record["p_value"][last] is not None and record["p_value"][last] < 0.05
        assert ("\\dag{}" in cell) == significant, record["system"]
    code, markdown, _ = cli(*args, "--format", "markdown")
    assert code == 0 and "| system | ARP" in markdown and "RΔ" in markdown


def test_source_bias_lineage(twins: Path, cli: Any) -> None:
    code, out, err = cli("report", "source-bias", "cocktail", "s1", "--bootstrap", "0",
                         "--json")
    assert code == 0, err
    lineage = json.loads(out)["lineage"]
    assert lineage["runs"] and all(r["checksum"] for r in lineage["runs"])
    assert lineage["qrels"][0]["n_judgments"] > 0


def test_renderers_escape_and_bold() -> None:
    from tcdb.operations.paper import PaperTable, to_latex, to_markdown

    table = PaperTable(columns=["run", "AP", "p"], rows=[["a_b", 0.5, 0.01], ["[x](y)", 0.7,
                                                                              None]],
                       figures={"AP": True}, marks=[{}, {"AP": "†"}], p_columns=["p"],
                       caption="50% of #1 & $2")
    latex = to_latex(table)
    assert "\\caption{50\\% of \\#1 \\& \\$2}" in latex
    assert "\\textbf{0.7000}\\textsuperscript{\\dag{}}" in latex and "a\\_b" in latex
    markdown = to_markdown(table)
    assert "\\[x\\](y)" in markdown and "**0.7000**<sup>†</sup>" in markdown


def _depth(text: str) -> int:
    """How deep parentheses nest in a line."""
    depth = deepest = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        deepest = max(deepest, depth)
    return deepest
