"""Topic subsets everywhere: `--topics SET` on evaluate, scores and the reports (means over the
subset by hand), topic sets tied to a model, and contamination files imported into one set per
model — with the quirks such files have, and errors that write nothing."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from tcdb.operations import Database
from tests.builders import build_snapshot, write_qrels_file, write_run_file

C = "sub"
DOCS = {f"d{i}": f"text {i}" for i in range(10)}
TOPICS = {str(t): f"query {t}" for t in range(1, 7)}
QRELS = [(str(t), f"d{t}", 1) for t in range(1, 6)]  # topic 6 is not judged
# run A: P@1 = 1 on topics 1, 2, 3; 0 on topic 4; topic 5 not answered → full mean 3/5
RUN_A = [("1", "d1", 3.0), ("2", "d2", 3.0), ("3", "d3", 3.0), ("4", "d9", 3.0),
         ("6", "d6", 3.0)]
# run B: P@1 = 1 on topics 4 and 5 only → full mean 2/5
RUN_B = [("1", "d9", 2.0), ("4", "d4", 2.0), ("5", "d5", 2.0)]


@pytest.fixture
def snap(db: str, tmp_path: Path) -> Path:
    """One snapshot, runs A and B evaluated, and topic set `half` = {1, 4, 5, 6}: judged in
    it are 1, 4, 5 → A's P@1 over them (1 + 0 + 0) / 3, B's (0 + 1 + 1) / 3."""
    from tcdb import api
    from tcdb.api import run_import
    from tcdb.scoring.evaluate import evaluate

    build_snapshot(tmp_path, C, "s1", DOCS, TOPICS, QRELS)
    run_import(C, "s1", [write_run_file(tmp_path / "runs", "A", RUN_A)])
    run_import(C, "s1", [write_run_file(tmp_path / "runs", "B", RUN_B)])
    evaluate(Database(), C, "s1", "original", ["P@1"])
    api.topic_set_create(collection=C, name="half", snapshot="s1", topic_ids=["1", "4", "5", "6"])
    return tmp_path


def means(frame: Any) -> dict[str, float]:
    return dict(zip(frame["run"], frame["value"], strict=True))


def n_scores() -> int:
    from sqlalchemy import func, select

    from tcdb.schema import Score

    with Database().session() as session:
        return int(session.execute(select(func.count()).select_from(Score)).scalar_one())


def test_scores_over_a_topic_set_by_hand(snap: Path) -> None:
    from tcdb import api

    full = api.scores(C, "s1", measures="P@1").to_frame()
    assert means(full) == pytest.approx({"A": 0.6, "B": 0.4})
    assert full["topic_set"].isna().all() and set(full["n_topics"]) == {5}
    part = api.scores(C, "s1", measures="P@1", topics="half").to_frame()
    assert means(part) == pytest.approx({"A": 1 / 3, "B": 2 / 3})
    assert set(part["topic_set"]) == {"half"} and set(part["n_topics"]) == {3}
    assert dict(zip(part["run"], part["n_answered"], strict=True)) == {"A": 2, "B": 3}
    # plain trec_eval over the subset: A answered 1 and 4 of it
    inter = api.scores(C, "s1", measures="P@1", topics="half", intersection=True).to_frame()
    assert means(inter) == pytest.approx({"A": 0.5, "B": 2 / 3})
    rows = api.scores(C, "s1", measures="P@1", topics="half", per_topic=True).to_frame()
    assert sorted(rows.loc[rows["run"] == "A", "topic"]) == ["1", "4", "5"]
    assert rows.loc[(rows["run"] == "A") & (rows["topic"] == "5"), "answered"].item() is False
    frame = api.per_topic_scores(C, "s1", measure="P@1", topics="half").to_frame()
    assert set(frame["topic"]) == {"1", "4", "5"}
    evaluated = api.evaluate(C, "s1", measures="P@1", topics="half").to_frame()
    assert means(evaluated) == pytest.approx({"A": 1 / 3, "B": 2 / 3})


def test_evaluate_and_scores_cli_with_topics(snap: Path, cli: Any) -> None:
    stored = n_scores()
    code, out, err = cli("evaluate", C, "s1", "-m", "P@1", "-m", "AP", "--topics", "half",
                         "--json")
    assert code == 0, err
    rows = json.loads(out)["means"]
    got = {(r["run"], r["measure"]): r for r in rows}
    assert got[("A", "P@1")]["value"] == pytest.approx(1 / 3)
    assert got[("B", "AP")]["value"] == pytest.approx(2 / 3)  # B finds d4, d5 at rank 1
    assert {r["topic_set"] for r in rows} == {"half"} and {r["n_topics"] for r in rows} == {3}
    # AP was scored on every answered topic, not only the subset's: 4 (A) + 3 (B) new rows
    assert n_scores() == stored + 7
    # the full means are untouched by the subset
    code, out, err = cli("scores", C, "s1", "-m", "P@1", "--json")
    assert code == 0, err
    assert {r["run"]: r["value"] for r in json.loads(out)["means"]} == pytest.approx(
        {"A": 0.6, "B": 0.4})
    code, out, err = cli("evaluate", C, "s1", "-m", "P@1", "--topics", "half")
    assert code == 0, err
    assert "topic set half (3 topics)" in out and "0.3333" in out and "0.6667" in out
    code, out, err = cli("scores", C, "s1", "-m", "P@1", "--topics", "half")
    assert code == 0, err
    assert "topic set half (3 topics)" in out and "0.3333" in out
    code, out, err = cli("scores", C, "s1", "-m", "P@1", "--topics", "half", "--per-topic",
                         "--csv")
    assert code == 0, err
    assert sorted(line.split(",")[5] for line in out.splitlines()[1:]) == ["1", "1", "4", "4",
                                                                           "5", "5"]


@pytest.mark.parametrize("args", [
    ("evaluate", C, "s1", "-m", "P@1"),
    ("scores", C, "s1", "-m", "P@1"),
    ("report", "subset", C, "s1"),
    ("report", "topic-deltas", C, "--system", "A", "-s", "s1", "s2"),
])
def test_unknown_topic_set_is_one_line_naming_the_known_ones(
        snap: Path, cli: Any, args: tuple[str, ...]) -> None:
    stored = n_scores()
    code, out, err = cli(*args, "--topics", "nope")
    assert code == 1
    assert err.strip().count("\n") == 0, err
    assert "no topic set 'nope' in 'sub' (known: half)" in err
    assert n_scores() == stored


def test_a_set_without_judged_topics(snap: Path, cli: Any) -> None:
    from tcdb import api

    api.topic_set_create(collection=C, name="unjudged", snapshot="s1", topic_ids=["6"])
    code, _, err = cli("scores", C, "s1", "-m", "P@1", "--topics", "unjudged")
    assert code == 1 and "topic set 'unjudged' has no topic judged in qrels set" in err


def two_snapshots(tmp_path: Path) -> None:
    """System A in s1 and s2 (topics 1–5, all judged). P@1 per topic, s1: 1 1 0 0 1;
    s2: 0 1 1 0 1 → deltas −1, 0, +1, 0, 0. Topic set `odd` = {1, 3, 5}."""
    from tcdb import api
    from tcdb.api import run_import
    from tcdb.scoring.evaluate import evaluate

    topics = {str(t): f"query {t}" for t in range(1, 6)}
    qrels = [(str(t), f"d{t}", 1) for t in range(1, 6)]
    hits = {"s1": [1, 1, 0, 0, 1], "s2": [0, 1, 1, 0, 1]}
    for label, row in hits.items():
        build_snapshot(tmp_path, C, label, DOCS, topics, qrels)
        rows = []
        for t, hit in zip(range(1, 6), row, strict=True):
            first = f"d{t}" if hit else "d9"
            rows += [(str(t), first, 2.0), (str(t), "d0" if hit else f"d{t}", 1.0)]
        run_import(C, label, [write_run_file(tmp_path / label, "A", rows)])
        evaluate(Database(), C, label, "original", ["P@1"])
    api.topic_set_create(collection=C, name="odd", snapshot="s1", topic_ids=["1", "3", "5"])


def test_topic_deltas_and_ranking_agreement_with_topics(db: str, tmp_path: Path,
                                                        cli: Any) -> None:
    from tcdb import api

    two_snapshots(tmp_path)
    code, out, err = cli("report", "topic-deltas", C, "--system", "A", "-s", "s1", "s2",
                         "-m", "P@1", "--topics", "odd", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["topic_set"] == "odd" and report["n_topics"] == 3
    assert {r["topic"]["s1"]: r["delta"] for r in report["topics"]} == {"1": -1, "3": 1, "5": 0}
    assert report["mean_delta"] == 0
    full = api.topic_deltas(C, system="A", snapshots=["s1", "s2"], measure="P@1").to_frame()
    assert len(full) == 5
    part = api.topic_deltas(C, system="A", snapshots=["s1", "s2"], measure="P@1",
                            topics="odd").to_frame()
    assert sorted(part["topic_a"]) == ["1", "3", "5"]
    code, out, err = cli("report", "topic-deltas", C, "--system", "A", "-s", "s1", "s2",
                         "-m", "P@1", "--topics", "odd")
    assert code == 0 and "3 core topics in topic set odd" in out
    code, out, err = cli("report", "ranking-agreement", C, "--system", "A", "-s", "s1", "s2",
                         "--topics", "odd", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["n_topics"] == 3 and report["topic_set"] == "odd"
    assert sorted(r["topic"]["s1"] for r in report["topics"]) == ["1", "3", "5"]
    # the same per-topic figures as without the set, and means over the set's topics only
    full_ktu = dict(zip(*api.ranking_agreement(C, system="A", snapshots=["s1", "s2"])
                        .to_frame()[["topic_a", "ktu"]]
                        .T.values.tolist(), strict=True))
    assert len(full_ktu) == 5
    ktu = {r["topic"]["s1"]: r["ktu"] for r in report["topics"]}
    assert ktu == {t: full_ktu[t] for t in ("1", "3", "5")}
    assert ktu["5"] == 1.0  # the same ranking in both snapshots
    assert report["mean_ktu"] == pytest.approx(sum(ktu.values()) / 3)
    frame = api.ranking_agreement(C, system="A", snapshots=["s1", "s2"],
                                  topics="odd").to_frame()
    assert sorted(frame["topic_a"]) == ["1", "3", "5"]
    code, _, err = cli("report", "ranking-agreement", C, "--system", "A", "-s", "s1", "s2",
                       "--topics", "nope")
    assert code == 1 and "no topic set 'nope' in 'sub' (known: odd)" in err


def test_assessor_agreement_with_topics(db: str, tmp_path: Path, cli: Any) -> None:
    """κ over the pool documents of the set's topics only, equal to sklearn's on them."""
    from sklearn.metrics import cohen_kappa_score

    from tcdb import api
    from tcdb.api import pool_build, pool_import_judgments, run_import
    from tcdb.judging.qrels import import_qrels
    from tcdb.pools import pool_documents

    rng = random.Random(3)
    docs = {f"d{i}": f"text {i}" for i in range(30)}
    topics = {str(t): f"query {t}" for t in range(1, 7)}
    build_snapshot(tmp_path, "a", "s1", docs, topics)
    for r in range(3):
        rows = [(t, f"d{i}", round(rng.random(), 6)) for t in topics
                for i in rng.sample(range(30), 10)]
        run_import("a", "s1", [write_run_file(tmp_path / "runs", f"r{r}", rows)])
    pool_build("a", "s1", "p", depth=5, all_runs=True)
    alice = {(t, d): rng.choice([0, 1, 2]) for t, ds in pool_documents(Database(), "p").items()
             for d in sorted(ds)}
    llm = {k: g if rng.random() < 0.7 else 2 - g for k, g in alice.items()}
    write_qrels_file(tmp_path / "alice.txt", [(t, d, g) for (t, d), g in alice.items()])
    pool_import_judgments("p", tmp_path / "alice.txt", assessor="alice")
    import_qrels(Database(), "a", "s1", "llm", write_qrels_file(
        tmp_path / "llm.txt", [(t, d, g) for (t, d), g in llm.items()]))
    api.topic_set_create(collection="a", name="low", snapshot="s1", topic_ids=["1", "2", "3"])
    code, out, err = cli("report", "agreement", "p", "--vs", "llm", "--topics", "low", "--json")
    assert code == 0, err
    report = json.loads(out)
    keys = sorted(k for k in alice if k[0] in {"1", "2", "3"})
    a, b = [alice[k] for k in keys], [llm[k] for k in keys]
    assert report["topics"] == "low" and report["n_overlap"] == len(keys)
    assert report["n_judged"] == [len(keys), len(keys)]
    assert report["kappa_graded_unweighted"] == pytest.approx(
        cohen_kappa_score(a, b, labels=sorted(set(a) | set(b))), abs=1e-12)
    code, out, err = cli("report", "agreement", "p", "--vs", "llm", "--topics", "low")
    assert code == 0 and "topic set low" in out


# ---------------------------------------------------------------- sets tied to a model


def count_sets() -> int:
    from tcdb import api

    return len(api.topic_sets().topic_sets)


def members(name: str) -> set[str]:
    from tcdb.catalog.collections import get_snapshot
    from tcdb.queries import snapshot_topics, topic_set_topic_ids

    with Database().session() as session:
        names = snapshot_topics(session.connection(), get_snapshot(session, C, "s1").pk)
        return {names[t][0] for t in topic_set_topic_ids(session, C, name)}


def test_create_for_a_model_and_list(snap: Path, cli: Any) -> None:
    code, out, err = cli("topics", "set", "create", "quiz", C, "s1", "--from-file",
                         _write(snap, "t.txt", "1\n2\n"), "--for-model", "GPT 4o",
                         "--method", "contamination-quiz", "--json")
    assert code == 0, err
    created = json.loads(out)
    assert created["for_model"] == "GPT 4o" and created["method"] == "contamination-quiz"
    code, out, err = cli("topics", "set", "list", C, "--json")
    rows = {r["name"]: r for r in json.loads(out)["topic_sets"]}
    assert rows["quiz"]["for_model"] == "GPT 4o"
    assert rows["half"]["method"] == "list" and rows["half"]["for_model"] is None
    code, out, err = cli("topics", "set", "list", C)
    assert code == 0 and "GPT 4o" in out and "contamination-quiz" in out


def _write(folder: Path, name: str, text: str, newline: str = "\n") -> Path:
    path = folder / name
    path.write_bytes(text.replace("\n", newline).encode("utf-8"))
    return path


QUIZ = """model,topic,score,threshold
GPT 4o,1,0.9,
GPT 4o,2,0.2,
GPT 4o,3,0.6,0.5
GPT 4o,4,0.4,0.5
llama-3,1,0.1,
llama-3,2,0.7,
llama-3,5,0.69,

"""


def test_contamination_import_one_set_per_model(snap: Path, cli: Any) -> None:
    """CRLF endings and a model name with spaces; rows with their own threshold beside the
    default (0.7): GPT 4o has seen 1 (0.9) and 3 (0.6 ≥ 0.5); llama-3 has seen 2 (0.7)."""
    path = _write(snap, "quiz.csv", QUIZ, newline="\r\n")
    code, out, err = cli("topics", "set", "import", C, "s1", path, "--threshold", "0.7",
                         "--json")
    assert code == 0, err
    sets = {s["name"]: s for s in json.loads(out)["sets"]}
    assert set(sets) == {"clean-GPT-4o", "clean-llama-3"}
    assert sets["clean-GPT-4o"]["for_model"] == "GPT 4o"
    assert sets["clean-GPT-4o"]["method"] == "contamination-quiz"
    assert "0.7" in sets["clean-GPT-4o"]["description"]
    assert (sets["clean-GPT-4o"]["n_topics"], sets["clean-GPT-4o"]["n_seen"]) == (2, 2)
    assert members("clean-GPT-4o") == {"2", "4"}
    assert members("clean-llama-3") == {"1", "5"}
    code, out, err = cli("topics", "set", "import", C, "s1", path, "--threshold", "0.7",
                         "--json")
    assert code == 0, err
    assert {s["status"] for s in json.loads(out)["sets"]} == {"unchanged"}
    # a TSV with --prefix, and a report restricted to the model's set names the model
    tsv = _write(snap, "quiz.tsv", "Model\tTopic\tScore\nGPT 4o\t1\t0.1\n")
    code, out, err = cli("topics", "set", "import", C, "s1", tsv, "--threshold", "0.5",
                         "--prefix", "tsv")
    assert code == 0, err
    assert "tsv-GPT-4o" in out and members("tsv-GPT-4o") == {"1"}


@pytest.mark.parametrize("text, line, reason", [
    ("model,topic,score\nm,1,0.1\nm,2,0.2\nm,1,0.3\n", 4,
     "model 'm' and topic '1' listed twice (first at line 2)"),
    ("model,topic,score\nm,1,0.1\nm,2,high\n", 3, "score 'high' is not a number"),
    ("model,topic,score\nm,1,0.1\nm,99,0.2\n", 3, "topic '99' is not in snapshot 's1'"),
    ("model,topic,value\nm,1,0.1\n", 1, "missing column(s) score"),
    ("model,topic,score,threshold\nm,1,0.1,\nm,2,0.2,x\n", 3, "threshold 'x' is not a number"),
    ("model,topic,score\nm,1,0.1\nm\n", 3, "1 field(s), the header has 3"),
])
def test_bad_contamination_file_names_line_and_writes_nothing(
        snap: Path, cli: Any, text: str, line: int, reason: str) -> None:
    from tcdb import api
    from tcdb.errors import InputError

    before = count_sets()
    path = _write(snap, "bad.csv", text, newline="\r\n")
    with pytest.raises(InputError) as info:
        api.topic_set_import(C, "s1", path, threshold=0.5)
    assert (info.value.file, info.value.line) == (str(path), line)
    assert reason in info.value.reason
    code, _, err = cli("topics", "set", "import", C, "s1", path, "--threshold", "0.5")
    assert code == 1 and f"{path}:{line}: {reason}" in err
    assert count_sets() == before


def test_contamination_without_threshold_and_changed_file(snap: Path) -> None:
    from tcdb import api
    from tcdb.errors import ConflictError, InputError

    before = count_sets()
    path = _write(snap, "quiz.csv", "model,topic,score\nm,1,0.1\nn,2,0.9\n")
    with pytest.raises(InputError, match="no threshold"):
        api.topic_set_import(C, "s1", path)
    assert count_sets() == before
    api.topic_set_import(C, "s1", path, threshold=0.5)
    assert members("clean-m") == {"1"} and members("clean-n") == set()
    changed = _write(snap, "quiz.csv", "model,topic,score\nm,1,0.9\nn,2,0.1\n")
    with pytest.raises(ConflictError, match="--replace"):
        api.topic_set_import(C, "s1", changed, threshold=0.5)
    assert members("clean-m") == {"1"} and members("clean-n") == set()  # both or neither
    result = api.topic_set_import(C, "s1", changed, threshold=0.5, replace=True)
    assert {s.status for s in result.sets} == {"replaced"}
    assert members("clean-m") == set() and members("clean-n") == {"2"}
