"""The README's campaign round, run as written: every command of its block, in order, on
generated files of the names it uses (the assessors' step answered from the exported pool)."""

from __future__ import annotations

import csv
import json
import random
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from tcdb.operations import Database

README = Path(__file__).parents[1] / "README.md"
TEAMS = {  # tag → (group, run type, contributed, skill)
    "team01-r1": ("team01", "automatic", "yes", 0.9),
    "team01-r2": ("team01", "automatic", "no", 0.6),
    "team02-r1": ("team02", "automatic", "yes", 0.7),
    "team02-r2": ("team02", "automatic", "yes", 0.8),
    "team03-manual": ("team03", "manual", "yes", 0.95),
    "bm25-baseline": ("organisers", "automatic", "no", 0.5),
}
N_DOCS, N_TOPICS = 300, 12


def readme_commands() -> list[list[str]]:
    """The `tcdb …` commands of the README's organiser block (continuations joined)."""
    text = README.read_text(encoding="utf-8")
    block = re.search(r"<!-- organiser-round: begin -->\n```bash\n(.*?)```", text, re.S)
    assert block, "the README lost its organiser block"
    lines = block.group(1).replace("\\\n", " ").splitlines()
    return [shlex.split(line, comments=True) for line in lines
            if line.strip() and not line.lstrip().startswith("#")]


def relevant(topic: int, doc: int) -> int:
    """The hidden truth: each topic's relevant documents, graded."""
    return 2 if doc % N_TOPICS == topic and doc % 3 == 0 else int(doc % N_TOPICS == topic)


def write_round(folder: Path) -> None:
    """Corpus, topics, the organisers' first qrels, the runs and their table."""
    rng = random.Random(1)
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for d in range(N_DOCS):
            f.write(json.dumps({"_id": f"doc{d}", "title": f"Document {d}",
                                "text": f"text of document {d}"}) + "\n")
    (folder / "topics.tsv").write_text(
        "".join(f"{t}\tquestion {t}\n" for t in range(1, N_TOPICS + 1)), encoding="utf-8")
    first = [f"{t} 0 doc{d} {relevant(t, d)}\n" for t in range(1, N_TOPICS + 1)
             for d in rng.sample(range(N_DOCS), 8)]
    (folder / "qrels-round1.txt").write_text("".join(first), encoding="utf-8")
    runs = folder / "submissions" / "round1"
    runs.mkdir(parents=True)
    for tag, (_, _, _, skill) in TEAMS.items():
        lines = []
        for t in range(1, N_TOPICS + 1):
            scored = sorted(range(N_DOCS), key=lambda d: -(relevant(t, d) * skill * 3
                                                            + rng.random()))[:50]
            lines += [f"{t} Q0 doc{d} {rank} {50 - rank}.5 {tag}\n"
                      for rank, d in enumerate(scored, start=1)]
        (runs / f"{tag}.run").write_text("".join(lines), encoding="utf-8")
    with (runs / "runs.csv").open("w", newline="", encoding="utf-8") as f:
        table = csv.writer(f)
        table.writerow(["tag", "group", "runtype", "contributed"])
        table.writerows([tag, g, t, c] for tag, (g, t, c, _) in TEAMS.items())


def judge(exported: Path, judged: Path) -> None:
    """The assessors: a grade for every pooled document, from the hidden truth."""
    with exported.open(encoding="utf-8", newline="") as f:
        rows = [(r["topic_id"], r["doc_id"]) for r in csv.DictReader(f)]
    with judged.open("w", encoding="utf-8", newline="") as f:
        table = csv.writer(f)
        table.writerow(["topic_id", "doc_id", "grade"])
        table.writerows((t, d, relevant(int(t), int(d[3:]))) for t, d in rows)


def test_the_readme_round_runs_as_written(db: str, tmp_path: Path, cli: Any,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_round(tmp_path)
    commands = readme_commands()
    assert len(commands) >= 10
    for command in commands:
        assert command[0] == "tcdb"
        args = [a for arg in command[1:]
                for a in (sorted(str(p) for p in tmp_path.glob(arg)) if "*" in arg else [arg])]
        if args[:2] == ["pool", "import-judgments"]:
            judge(tmp_path / "judge20.csv", tmp_path / args[3])
        code, out, err = cli(*args)
        assert code == 0, f"tcdb {' '.join(command[1:])}\n{out}\n{err}"
    from tcdb.runs import list_runs

    runs = {r["run"]: r for r in list_runs(Database(), "mytrack", "round1")}
    assert set(runs) == set(TEAMS)
    assert runs["team02-r2"]["run_type"] == "feedback"
    assert runs["team03-manual"]["run_type"] == "manual"
    assert [t for t, r in runs.items() if r["contributed"]] == [
        "team01-r1", "team02-r1", "team02-r2", "team03-manual"]
    exported = (tmp_path / "qrels-round1-full.txt").read_text(encoding="utf-8").splitlines()
    assert len(exported) > len((tmp_path / "qrels-round1.txt").read_text().splitlines())
    code, out, _ = cli("report", "reusability", "mytrack", "round1", "--qrels", "original",
                       "--vs", "round1-full", "--measure", "nDCG@10", "--json")
    assert json.loads(out)["measures"]["nDCG@10"]["n_runs"] == len(TEAMS)
