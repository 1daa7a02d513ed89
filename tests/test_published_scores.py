"""A collection built from published per-topic scores only (issue 33, item 1), on both databases.

The README's "From published scores only" example, run as written: three snapshots registered
without documents, five systems' `trec_eval -q` files imported with no qrels (a `published`
set records where they came from), and the persistence report — every figure checked against
numpy/scipy/repro_eval on the generated scores themselves (`tests/published_scores.py`). Then
compare, subset and topic deltas on the same collection, the tidy CSV reading the same values,
and documents and qrels ingested into a registered snapshot later.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from pathlib import Path

import pytest
from repro_eval.measure.overall_effects import DRI, ER
from scipy import stats
from sqlalchemy import func, select

from tcdb.errors import ConflictError, FieldError, InputError
from tcdb.operations import Database
from tcdb.schema import Judgment, QrelsSet, Run, Score, Snapshot, SnapshotTopic
from tests.builders import write_documents, write_qrels_file, write_run_file, write_topics
from tests.published_scores import SNAPSHOTS, SYSTEMS, scores, write_tidy, write_trec_eval

C = "irc"
README = Path(__file__).parents[1] / "README.md"


def readme_block() -> tuple[list[list[str]], list[str]]:
    """The `tcdb …` commands of the README's published-scores block (continuations joined),
    and the rows of the persistence table printed after it."""
    text = README.read_text(encoding="utf-8")
    block = re.search(r"<!-- published-scores: begin -->\n```bash\n(.*?)```", text, re.S)
    assert block, "the README lost its published-scores block"
    lines = block.group(1).replace("\\\n", " ").splitlines()
    commands = [shlex.split(line, comments=True) for line in lines
                if line.strip() and not line.lstrip().startswith("#")]
    shown = re.search(r"The persistence report:\n\n```\n(.*?)```", text[block.end():], re.S)
    assert shown, "the README lost the persistence report of its published-scores example"
    rows = [line for line in shown.group(1).splitlines()
            if line.split(" ")[0] in SYSTEMS]
    return commands, rows


def readme_rankings() -> list[list[str]]:
    """The pairs table of the rankings report the README prints after the persistence one."""
    text = README.read_text(encoding="utf-8")
    shown = re.search(r"system rankings across snapshots, from per-topic scores\n(.*?)largest",
                      text, re.S)
    assert shown, "the README lost the rankings report of its published-scores example"
    return [line.split() for line in shown.group(1).splitlines()
            if line[:4].isdigit()]


def _universe(label: str) -> list[str]:
    """The topics the snapshot's published scores name (any system, any measure)."""
    named = {t for (snap, _), by in scores().items() if snap == label
             for values in by.values() for t in values}
    return sorted(named)


def _vector(label: str, system: str, trec_name: str) -> dict[str, float]:
    """One system's values over the snapshot's topics, 0 where it gave none (trec_eval -c)."""
    got = scores()[(label, system)][trec_name]
    return {t: got.get(t, 0.0) for t in _universe(label)}


@pytest.fixture
def published(db: str, tmp_path: Path, cli) -> Path:
    """The README example: a collection, three registered snapshots, fifteen score files."""
    files = write_trec_eval(tmp_path / "scores")
    assert cli("collection", "add", C)[0] == 0
    for label in SNAPSHOTS:
        code, out, err = cli("snapshot", "register", C, label, "--date", f"{label}-01")
        assert code == 0, err
        assert "registered without documents" in out
        for system in SYSTEMS:
            code, out, err = cli("scores", "import", C, label, files[(label, system)],
                                 "--source", "LongEval 2022 official results")
            assert code == 0, err
            assert f"run {system}: imported" in out
    return tmp_path


def test_readme_example_persistence_equals_numpy_scipy_and_repro_eval(published: Path,
                                                                      cli) -> None:
    code, out, err = cli("snapshot", "list", C, "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert [(r["label"], r["with_documents"], r["topics_from_scores"], r["topics"],
             r["judgments"]) for r in rows] == [
        (label, False, True, len(_universe(label)), 0) for label in SNAPSHOTS]
    with Database().session() as session:
        sets = session.execute(select(QrelsSet.name, QrelsSet.kind, QrelsSet.source)).all()
        assert {(n, k.value, s) for n, k, s in sets} == {
            ("published", "published", "LongEval 2022 official results")}
        assert session.execute(select(func.count()).select_from(Judgment)).scalar_one() == 0
        assert {r.n_entries for r in session.execute(select(Run)).scalars()} == {0}

    from tcdb import api

    figures = api.snapshot_stats(C, snapshots=list(SNAPSHOTS))
    assert [(s.with_documents, s.documents, s.runs) for s in figures.per_snapshot] == [
        (False, 0, [])] * 3  # runs of published scores have no rankings, not empty ones
    code, out, err = cli("snapshot", "stats", C, *SNAPSHOTS)
    assert code == 0 and out.count("none (scores)") == 3 and "empty" not in out, err
    code, out, err = cli("report", "persistence", C, "-s", *SNAPSHOTS, "--pivot", "bm25",
                         "--qrels", "published", "-m", "nDCG@10", "-m", "AP", "--json")
    assert code == 0, err
    report = json.loads(out)
    first = SNAPSHOTS[0]
    assert report["topics"]["n_topics"] == {s: len(_universe(s)) for s in SNAPSHOTS}
    checked = 0
    for trec_name, name in (("ndcg_cut_10", "nDCG@10"), ("map", "AP")):
        systems = {s["system"]: s for s in report["measures"][name]["systems"]}
        assert sorted(systems) == sorted(SYSTEMS)
        for system in SYSTEMS:
            row = systems[system]
            org = _vector(first, system, trec_name)
            arp_first = sum(org.values()) / len(org)
            assert row["arp"][first] == pytest.approx(arp_first, abs=1e-9)
            for later in SNAPSHOTS[1:]:
                rep = _vector(later, system, trec_name)
                arp = sum(rep.values()) / len(rep)
                assert row["arp"][later] == pytest.approx(arp, abs=1e-9)
                assert row["result_delta"][later] == pytest.approx(arp_first - arp, abs=1e-9)
                p = stats.ttest_ind(list(org.values()), list(rep.values())).pvalue
                assert row["p_value"][later] == pytest.approx(p, abs=1e-12)
                if system == "bm25":
                    assert row["er"][later] is None
                    continue
                nested = [{t: {name: v} for t, v in x.items()} for x in (
                    org, _vector(first, "bm25", trec_name), rep,
                    _vector(later, "bm25", trec_name))]
                assert row["er"][later] == pytest.approx(ER(*nested)[name], abs=1e-9)
                assert row["delta_ri"][later] == pytest.approx(DRI(*nested)[name], abs=1e-9)
                checked += 1
    assert checked == 2 * 4 * 2
    code, out, err = cli("report", "persistence", C, "-s", *SNAPSHOTS, "--pivot", "bm25",
                         "--qrels", "published", "-m", "nDCG@10")
    assert code == 0, err
    assert "monot5" in out and "2022-09" in out


def test_readme_block_runs_as_written_and_prints_its_table(db: str, tmp_path: Path, cli,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    commands, rows = readme_block()
    assert [c[:3] for c in commands].count(["tcdb", "scores", "import"]) == len(SNAPSHOTS)
    for label, path in write_tidy(tmp_path / "generated").items():
        path.rename(tmp_path / f"scores-{label}.csv")
    monkeypatch.chdir(tmp_path)
    outputs = []
    for command in commands:
        assert command[0] == "tcdb"
        code, out, err = cli(*command[1:])
        assert code == 0, f"{shlex.join(command)}: {err}"
        outputs.append(out)
    persistence = outputs[[c[:3] for c in commands].index(["tcdb", "report", "persistence"])]
    printed = [line for line in persistence.splitlines() if line.split(" ")[0] in SYSTEMS]
    assert [r.split() for r in printed] == [r.split() for r in rows]
    rankings = outputs[[c[:3] for c in commands].index(["tcdb", "report", "rankings"])]
    pairs = [line.split() for line in rankings.split("largest")[0].splitlines()
             if line[:4].isdigit()]
    assert pairs == readme_rankings()
    for earlier, later, n_systems, n_topics, tau_b, p_b, _r, _p_r, tau_c, _tau_ap, _moved in pairs:
        # τ against scipy on the generated scores: means over the topics both snapshots name
        common = sorted(set(_universe(earlier)) & set(_universe(later)))
        means = [[round(sum(_vector(label, system, "ndcg_cut_10")[t] for t in common)
                        / len(common), 12) for system in SYSTEMS] for label in (earlier, later)]
        expected_b = stats.kendalltau(*means, variant="b")
        expected_c = stats.kendalltau(*means, variant="c")
        assert (int(n_systems), int(n_topics)) == (len(SYSTEMS), len(common))
        assert float(tau_b) == pytest.approx(expected_b.statistic, abs=5e-5)
        assert float(p_b) == pytest.approx(expected_b.pvalue, abs=5e-5)
        assert float(tau_c) == pytest.approx(expected_c.statistic, abs=5e-5)
    assert len(rows) == 2 * len(SYSTEMS)
    for row in rows:  # ARP and RΔ as printed, against numpy on the generated scores
        system, label, arp_first, arp, delta = row.replace(" (pivot)", "").split()[:5]
        first = _vector(SNAPSHOTS[0], system, "ndcg_cut_10")
        later = _vector(label, system, "ndcg_cut_10")
        assert float(arp_first) == pytest.approx(sum(first.values()) / len(first), abs=5e-5)
        assert float(arp) == pytest.approx(sum(later.values()) / len(later), abs=5e-5)
        assert float(delta) == pytest.approx(float(arp_first) - float(arp), abs=2e-4)


def test_compare_subset_and_topic_deltas_read_published_scores(published: Path) -> None:
    from tcdb import api

    label = "2022-07"
    result = api.compare(C, label, qrels="published", measure="AP", permutations=200)
    assert result.n_topics == len(_universe(label))
    means = {r.run: r.mean for r in result.runs}
    for system in SYSTEMS:
        vector = _vector(label, system, "map")
        assert means[system] == pytest.approx(sum(vector.values()) / len(vector), abs=1e-9)
    pair = next(p for p in result.pairs if {p.run_a, p.run_b} == {"bm25", "monot5"})
    a = list(_vector(label, pair.run_a, "map").values())
    b = list(_vector(label, pair.run_b, "map").values())
    assert pair.p_t == pytest.approx(stats.ttest_rel(a, b).pvalue, abs=1e-12)
    assert pair.p_wilcoxon == pytest.approx(stats.wilcoxon(a, b).pvalue, abs=1e-12)
    assert not result.outcomes.applicable
    assert "published" in (result.outcomes.reason or "")

    api.topic_set_create(collection=C, name="early", snapshot=label,
                         topic_ids=["q01", "q02", "q03", "q05"])
    subset = api.subset_ci(C, label, topics="early", qrels="published", measure="AP",
                           bootstrap=200)
    assert subset.n_topics == len(_universe(label)) and subset.n_subset == 4
    for row in subset.runs:
        vector = _vector(label, row.run, "map")
        assert row.subset_mean == pytest.approx(
            sum(vector[t] for t in ("q01", "q02", "q03", "q05")) / 4, abs=1e-9)

    deltas = api.topic_deltas(C, system="monot5", snapshots=["2022-06", "2022-09"],
                              qrels=["published"], measure="AP")
    core = sorted(set(_universe("2022-06")) & set(_universe("2022-09")))
    assert deltas.n_topics == len(core)
    a6, a9 = _vector("2022-06", "monot5", "map"), _vector("2022-09", "monot5", "map")
    assert {c.topic_key: c.delta for c in deltas.topics} == pytest.approx(
        {t: a9[t] - a6[t] for t in core}, abs=1e-9)


def test_tidy_csv_stores_the_same_values_as_trec_eval_files(db: str, tmp_path: Path,
                                                            cli) -> None:
    from tcdb import api

    tidy = write_tidy(tmp_path / "tidy")
    api.collection_add(C)
    for label in SNAPSHOTS:
        api.snapshot_register(C, label)
        result = api.scores_import(C, label, tidy[label])
        assert sorted(r.run for r in result.runs) == sorted(SYSTEMS)
        assert result.qrels == "published" and result.qrels_kind == "published"
        assert sorted(result.topics_added) == _universe(label)
    table = api.per_topic_scores(C, list(SNAPSHOTS), qrels="published", measure="P@10",
                                 intersection=True)
    got = {(s.snapshot, s.run, s.topic): s.value for s in table.scores}
    want = {(label, system, t): v for (label, system), by in scores().items()
            for t, v in by["P_10"].items()}
    assert got == pytest.approx(want, abs=1e-12)
    again = api.scores_import(C, "2022-06", tidy["2022-06"])
    assert again.status == "unchanged" and again.n_scores == 0
    one = api.scores_import(C, "2022-07", tidy["2022-07"], run="d2q")
    assert [r.run for r in one.runs] == ["d2q"] and one.run == "d2q"
    with pytest.raises(FieldError, match="no rows of run 'bm26'"):
        api.scores_import(C, "2022-07", tidy["2022-07"], run="bm26")


def test_tidy_csv_is_validated_whole_and_read_as_written(db: str, tmp_path: Path) -> None:
    from tcdb import api

    api.collection_add(C)
    api.snapshot_register(C, "s")
    bad = {
        "run,topic,value\nr,1,0.5\n": (1, "expected the header"),
        "run,topic,measure,value\nr,1,nonsense@x,0.5\n": (2, "unknown measure"),
        "run,topic,measure,value\nr,1,AP,0.5\nr,1,map,0.4\n": (3, "appears twice"),
        "run,topic,measure,value\nr,1,AP,nan\n": (2, "not a finite number"),
        "run,topic,measure,value\nr,1 2,AP,0.5\n": (2, "an id is one word"),
        "run,topic,measure,value\nr,1,AP,high\n": (2, "is not a number"),
        "run,topic,measure,value\n,1,AP,0.5\n": (2, "empty run"),
        "run,topic,measure,value\nr,1,AP\n": (2, "expected 4 cells"),
        "run,topic,measure,value,extra\nr,1,AP,0.5,x\n": (1, "exactly the columns"),
    }
    for n, (text, (line, reason)) in enumerate(bad.items()):
        path = tmp_path / f"bad{n}.csv"
        path.write_text(text)
        with pytest.raises(InputError) as caught:
            api.scores_import(C, "s", path)
        assert caught.value.line == line and reason in caught.value.reason, text
    with Database().session() as session:
        assert session.execute(select(func.count()).select_from(Score)).scalar_one() == 0
        assert session.execute(select(func.count()).select_from(Run)).scalar_one() == 0
    hostile = tmp_path / "hostile.csv"
    hostile.write_text('run;topic;measure;value\n"=HYPERLINK(""x"")";\'+1;nDCG@10;0.25\n')
    result = api.scores_import(C, "s", hostile)
    assert [r.run for r in result.runs] == ['=HYPERLINK("x")']
    assert result.topics_added == ["'+1"]


def test_scores_name_topics_a_registered_topics_file_lacks(db: str, tmp_path: Path,
                                                          cli) -> None:
    from tcdb import api

    api.collection_add(C)
    ids = tmp_path / "ids.txt"
    ids.write_text("qid\nq1\nq2\n")
    registered = api.snapshot_register(C, "s", topics_file=ids)
    assert (registered.n_topics, registered.topics_from_scores) == (2, False)
    assert api.snapshot_register(C, "s", topics_file=ids).status == "unchanged"
    path = tmp_path / "r.score"
    path.write_text("runid\tall\tr\nmap\tq1\t0.5\nmap\tq9\t0.1\n")
    with pytest.raises(InputError) as caught:
        api.scores_import(C, "s", path)
    assert caught.value.line == 3 and "topic 'q9' is not in snapshot 's'" in caught.value.reason
    code, _, err = cli("scores", "import", C, "s", path)
    assert code == 1 and f"{path}:3:" in err
    with pytest.raises(FieldError, match="run"):
        no_tag = tmp_path / "n.score"
        no_tag.write_text("map\tq1\t0.5\n")
        api.scores_import(C, "s", no_tag)
    with Database().session() as session:
        assert session.execute(select(func.count()).select_from(Score)).scalar_one() == 0


def test_documents_and_qrels_ingested_later_keep_the_published_scores(db: str,
                                                                       tmp_path: Path) -> None:
    from tcdb import api
    from tcdb.scoring.evaluate import evaluate

    api.collection_add(C)
    api.snapshot_register(C, "s")
    path = tmp_path / "old.score"
    path.write_text("runid\tall\told\nmap\t1\t0.5\nmap\t2\t0.25\n")
    api.scores_import(C, "s", path)
    assert evaluate(Database(), C, "s", "published", ["AP", "RR"]).skipped == ["old"]
    folder = tmp_path / "files"
    docs = write_documents(folder / "docs.trec", {"d1": "one", "d2": "two", "d3": "three"})
    topics = write_topics(folder / "topics.tsv", {"1": "first", "2": "second", "3": "third"})
    qrels = write_qrels_file(folder / "qrels.txt", [("1", "d1", 1), ("2", "d3", 1),
                                                    ("3", "d2", 1)])
    report = api.snapshot_ingest(C, "s", docs=docs, topics_file=topics, qrels_file=qrels)
    assert (report.n_documents, report.n_topics, report.n_judgments) == (3, 3, 3)
    with Database().session() as session:
        snap = session.execute(select(Snapshot)).scalar_one()
        assert (snap.with_documents, snap.topics_from_scores, snap.n_topics) == (True, False, 3)
        texts = dict(session.execute(select(SnapshotTopic.external_id, SnapshotTopic.query))
                     .tuples().all())
        assert texts == {"1": "first", "2": "second", "3": "third"}  # ids got their texts
        kinds = dict(session.execute(select(QrelsSet.name, QrelsSet.kind)).tuples().all())
        assert {k: v.value for k, v in kinds.items()} == {"published": "published",
                                                         "original": "original"}
    published = api.scores(C, "s", qrels="published", measures=["AP"])
    assert published.means[0].value == pytest.approx(0.375)  # its 2 topics, unchanged
    api.run_import(C, "s", [write_run_file(tmp_path / "runs", "new",
                                           [("1", "d1", 2.0), ("1", "d2", 1.0),
                                            ("3", "d2", 1.0)])])
    scored = api.scores(C, "s", qrels="original", measures=["AP"], runs=["new"])
    assert scored.means[0].value == pytest.approx((1.0 + 0.0 + 1.0) / 3)
    assert api.snapshot_ingest(C, "s", docs=docs, topics_file=topics,
                               qrels_file=qrels).status == "unchanged"


def test_published_scores_for_a_run_with_entries_and_conflicts(db: str, tmp_path: Path) -> None:
    from tcdb import api

    api.collection_add(C)
    folder = tmp_path / "files"
    api.snapshot_ingest(C, "s", docs=write_documents(folder / "d.trec", {"d1": "x", "d2": "y"}),
                        topics_file=write_topics(folder / "t.tsv", {"1": "a", "2": "b"}),
                        qrels_file=write_qrels_file(folder / "q.txt", [("1", "d1", 1)]))
    api.run_import(C, "s", [write_run_file(tmp_path / "runs", "r", [("1", "d1", 1.0)])])
    path = tmp_path / "r.score"
    path.write_text("runid\tall\tr\nmap\t1\t0.9\nmap\t2\t0.1\n")
    result = api.scores_import(C, "s", path)  # the official figures, beside our own
    assert result.qrels_kind == "published" and result.n_scores == 2
    judged_only = tmp_path / "r1.score"
    judged_only.write_text("runid\tall\tr\nmap\t1\t0.9\n")
    with pytest.raises(ConflictError, match="entries stored"):
        api.scores_import(C, "s", judged_only, qrels="original")
    with pytest.raises(ConflictError, match="nothing to register"):
        api.snapshot_register(C, "s")
    own = api.scores(C, "s", qrels="original", measures=["AP"]).means[0].value
    official = api.scores(C, "s", qrels="published", measures=["AP"]).means[0].value
    assert (own, official) == (pytest.approx(1.0), pytest.approx(0.5))
    assert not math.isnan(official)


def test_text_identity_needs_texts(db: str, tmp_path: Path) -> None:
    from tcdb import api

    api.collection_add(C, topic_identity="text")
    with pytest.raises(FieldError, match="topics_file"):
        api.snapshot_register(C, "s")
    ids = tmp_path / "ids.txt"
    ids.write_text("q1\nq2\n")
    with pytest.raises(InputError, match="no query text"):
        api.snapshot_register(C, "s", topics_file=ids)
