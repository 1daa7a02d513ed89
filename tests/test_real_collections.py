"""Real collections' quirks, each rebuilt from real-format files (TREC documents, topics, qrels,
runs; a LongEval layout read through `--irds`), on SQLite and PostgreSQL.

TREC-COVID's five rounds and LongEval's snapshots showed every one of these: equal means that
differ in the last bit, a snapshot's judgments counted twice, two groups' `run1`, qrels judging
documents an earlier round lacks, judging rounds in the iteration column, residual evaluation,
repeated document ids, repeated query texts, and a grade scale narrowed under stored data.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import ir_measures
import pytest
from scipy import stats

from tcdb.errors import ConflictError, FieldError, InputError
from tcdb.operations import Database
from tests.builders import build_snapshot, write_qrels_file, write_run_file

TOPICS = {str(t): f"query {t}" for t in range(1, 11)}


def _docs() -> dict[str, str]:
    """Per topic 5 relevant (R), 3 extra (X: relevant only under the later qrels), 5 others."""
    docs = {}
    for t in TOPICS:
        for prefix, n in (("R", 5), ("X", 3), ("N", 5)):
            for i in range(n):
                docs[f"{prefix}{t}-{i}"] = f"document {prefix} {i} about topic {t}"
    return docs


def _top5(topic: str, relevant: int, extra: int = 0) -> list[tuple[str, str, float]]:
    """A top 5 holding `relevant` R documents, then `extra` X ones, then N ones."""
    docs = [f"R{topic}-{i}" for i in range(relevant)] + [f"X{topic}-{i}" for i in range(extra)]
    docs += [f"N{topic}-{i}" for i in range(5 - len(docs))]
    return [(topic, doc, 10.0 - rank) for rank, doc in enumerate(docs)]


# P@5 × 5 per topic. A and B hold the same multiset in different topic orders: their means are
# both exactly 0.48, but summed in topic order as floats they differ in the last bit.
RELEVANT_IN_TOP5 = {
    "A": [1, 4, 0, 2, 0, 3, 3, 3, 5, 3],
    "B": [0, 5, 0, 3, 3, 3, 1, 3, 4, 2],
    "C": [2] * 10,
    "D": [3, 3, 3, 3, 3, 2, 2, 2, 3, 4],
}


@pytest.fixture
def tie(db: str, tmp_path: Path) -> dict[str, list[int]]:
    qrels = [(t, f"R{t}-{i}", 1) for t in TOPICS for i in range(5)]
    qrels += [(t, f"N{t}-{i}", 0) for t in TOPICS for i in range(5)]
    build_snapshot(tmp_path, "c", "s", _docs(), TOPICS, qrels)
    from tcdb.api import run_import
    from tcdb.judging.qrels import import_qrels

    later = qrels + [(t, f"X{t}-{i}", 1) for t in ("1", "2", "3") for i in range(3)]
    import_qrels(Database(), "c", "s", "later", write_qrels_file(tmp_path / "later.txt", later))
    files = []
    for tag, counts in RELEVANT_IN_TOP5.items():
        extra = 3 if tag == "C" else 0
        rows = [row for t, k in zip(TOPICS, counts, strict=True) for row in _top5(t, k, extra)]
        files.append(write_run_file(tmp_path / "runs", tag, rows))
    run_import("c", "s", files)
    return RELEVANT_IN_TOP5


def test_equal_means_tie_however_they_were_summed(tie: dict[str, list[int]]) -> None:
    from tcdb import api
    from tcdb.scoring.scores import score_table

    values = {tag: [k / 5 for k in counts] for tag, counts in tie.items()}
    naive = {tag: sum(v) / len(v) for tag, v in values.items()}
    assert naive["A"] != naive["B"]  # the case: float sums in topic order differ in the last bit
    means = score_table(Database(), "c", "s", "original", ["P@5"]).set_index("run")["value"]
    assert means["A"] == means["B"] == 0.48

    report = api.reusability("c", "s", qrels="original", vs="later",
                             measures=["P@5"]).measures["P@5"]
    ranks = {r.run: (r.rank_a, r.rank_b) for r in report.runs}
    assert ranks["A"] == ranks["B"]

    def exact(tag: str, extra_topics: int) -> Fraction:
        counts = tie[tag]
        gained = [3 if tag == "C" and i < extra_topics else 0 for i in range(len(counts))]
        return sum((Fraction(k + g, 5) for k, g in zip(counts, gained, strict=True)),
                   Fraction(0)) / len(counts)

    tags = sorted(tie)
    under_a = [float(exact(t, 0)) for t in tags]
    under_b = [float(exact(t, 3)) for t in tags]
    assert under_a[0] == under_a[1]  # A and B tie, exactly
    assert report.tau_b == pytest.approx(stats.kendalltau(under_a, under_b).statistic,
                                            abs=1e-12)


def test_one_designated_original_qrels_set(db: str, tmp_path: Path, cli) -> None:
    from tcdb.api import snapshot_diff
    from tcdb.catalog.collections import list_snapshots

    qrels = [("1", "R1-0", 1), ("1", "N1-0", 0), ("2", "R2-0", 1), ("2", "N2-0", 0)]
    build_snapshot(tmp_path, "c", "s1", _docs(), TOPICS, qrels)
    build_snapshot(tmp_path, "c", "s2", _docs(), TOPICS, qrels)
    cumulative = qrels + [("1", "R1-1", 1), ("2", "R2-1", 2)]
    code, out, err = cli("qrels", "import", "c", "s1", "cumulative",
                         write_qrels_file(tmp_path / "cumulative.txt", cumulative), "--json")
    assert code == 0, err
    assert json.loads(out)["kind"] == "derived"  # an extra set does not become the original
    code, out, err = cli("qrels", "import", "c", "s1", "round2",
                         write_qrels_file(tmp_path / "round2.txt", cumulative[:5]),
                         "--kind", "original", "--json")
    assert code == 0 and json.loads(out)["original"] is False, err
    listed = {s["label"]: s for s in list_snapshots(Database(), "c")}
    diff = snapshot_diff("c", ["s1", "s2"])
    assert listed["s1"]["judgments"] == diff.qrels["s1"].judgments == 4

    code, out, err = cli("qrels", "import", "c", "s1", "round2",
                         write_qrels_file(tmp_path / "round2.txt", cumulative[:5]),
                         "--kind", "original", "--designate", "--json")
    assert code == 0 and json.loads(out)["status"] == "unchanged", err
    code, _, err = cli("qrels", "import", "c", "s1", "round2b",
                       write_qrels_file(tmp_path / "round2b.txt", cumulative[:5]),
                       "--kind", "original", "--designate")
    assert code == 0, err
    listed = {s["label"]: s for s in list_snapshots(Database(), "c")}
    assert listed["s1"]["judgments"] == snapshot_diff("c", ["s1", "s2"]).qrels[
        "s1"].judgments == 5


def test_two_groups_run1_are_two_systems(db: str, tmp_path: Path, cli) -> None:
    from tcdb.api import persistence

    qrels = [(t, f"R{t}-{i}", 1) for t in TOPICS for i in range(2)]
    for label in ("r1", "r2"):
        build_snapshot(tmp_path, "covid", label, _docs(), TOPICS, qrels)
        rows = [row for t in TOPICS for row in _top5(t, 1)]
        cli("run", "import", "covid", label, write_run_file(tmp_path / label, "bm25", rows))
    code, _, err = cli("run", "import", "covid", "r1", "--group", "GUIR_S2",
                       write_run_file(tmp_path / "r1", "run1", [r for t in TOPICS
                                                                for r in _top5(t, 2)]))
    assert code == 0, err
    code, _, err = cli("run", "import", "covid", "r2", "--group", "cuni",
                       write_run_file(tmp_path / "r2", "run1", [r for t in TOPICS
                                                                for r in _top5(t, 0)]))
    assert code == 0, err
    report = persistence("covid", snapshots=["r1", "r2"], pivot="bm25", measures=["P@5"])
    result = report.measures["P@5"]
    assert [s.system for s in result.systems] == ["bm25"]  # no ER across two teams
    assert {s.system for s in result.skipped} == {"GUIR_S2/run1", "cuni/run1"}

    # `--system` says explicitly which system a run belongs to; ambiguous without a group
    code, _, err = cli("run", "import", "covid", "r2", "--system", "run1",
                       write_run_file(tmp_path / "r2", "again", [r for t in TOPICS
                                                                 for r in _top5(t, 1)]))
    assert code == 1 and "--system" in err and "GUIR_S2" in err and "cuni" in err
    code, _, err = cli("run", "import", "covid", "r1", "--group", "A",
                       write_run_file(tmp_path / "r1", "solo", [r for t in TOPICS
                                                                for r in _top5(t, 3)]))
    assert code == 0, err
    code, _, err = cli("run", "import", "covid", "r2", "--group", "B", "--system", "solo",
                       write_run_file(tmp_path / "r2", "solo-b", [r for t in TOPICS
                                                                  for r in _top5(t, 3)]))
    assert code == 0, err
    report = persistence("covid", snapshots=["r1", "r2"], pivot="bm25", measures=["P@5"])
    systems = {s.system: s for s in report.measures["P@5"].systems}
    assert systems["solo"].runs == {"r1": "solo", "r2": "solo-b"}
    assert any("'solo'" in w and "A in r1" in w and "B in r2" in w for w in report.warnings)
    code, _, err = cli("report", "persistence", "covid", "--snapshots", "r1", "r2", "--pivot",
                       "bm25", "--measure", "P@5")
    assert code == 0 and "warning: the runs of system 'solo'" in err


def test_qrels_judging_documents_an_earlier_snapshot_lacks(db: str, tmp_path: Path,
                                                           cli) -> None:
    """TREC-COVID's complete qrels on round 1: documents of later rounds are documents of the
    collection; a document of no round is refused with the count, or kept unresolved."""
    docs = _docs()
    round1 = {d: t for d, t in docs.items() if not d.startswith("X")}
    build_snapshot(tmp_path, "covid", "round1", round1, TOPICS, [("1", "R1-0", 1)])
    build_snapshot(tmp_path, "covid", "round2", docs, TOPICS, [("1", "R1-0", 1)])
    complete = [(t, f"{p}{t}-{i}", 1 if p != "N" else 0) for t in ("1", "2")
                for p in ("R", "X", "N") for i in range(3)]
    path = write_qrels_file(tmp_path / "complete.txt",
                            complete + [("1", "ghost-1", 1), ("2", "ghost-2", 2)])
    code, _, err = cli("qrels", "import", "covid", "round1", "complete", path)
    assert code == 1 and "'ghost-1' is not in snapshot 'round1'" in err
    assert "2 of 20 judgment(s)" in err and "line 19 (ghost-1), line 20 (ghost-2)" in err
    code, out, err = cli("qrels", "import", "covid", "round1", "complete", path,
                         "--allow-unknown-docs", "--json")
    assert code == 0 and json.loads(out)["n_judgments"] == 20, err

    run = write_run_file(tmp_path / "runs", "r", [row for t in ("1", "2")
                                                  for row in _top5(t, 2)])
    code, _, err = cli("run", "import", "covid", "round1", run)
    assert code == 0, err
    code, out, err = cli("scores", "covid", "round1", "--qrels", "complete", "-m", "AP",
                         "-m", "R@5", "--json")
    assert code == 0, err
    ours = {r["measure"]: r["value"] for r in json.loads(out)["means"]}
    measures = [ir_measures.AP, ir_measures.R @ 5]
    ref = ir_measures.calc_aggregate(measures, ir_measures.read_trec_qrels(str(path)),
                                     ir_measures.read_trec_run(str(run)))
    assert ours == pytest.approx({"AP": ref[ir_measures.AP], "R@5": ref[ir_measures.R @ 5]},
                                 abs=1e-12)

    code, _, err = cli("qrels", "export", "covid", "round1", "complete", "--out",
                       tmp_path / "out.txt")
    assert code == 0, err
    exported = sorted((tmp_path / "out.txt").read_text().splitlines())
    assert exported == sorted(path.read_text().splitlines())


def test_iterations_kept_split_and_exported(db: str, tmp_path: Path, cli) -> None:
    build_snapshot(tmp_path, "covid", "round3", _docs(), TOPICS, [("1", "R1-0", 1)])
    lines = ["1 0.5 R1-0 1", "1 1 R1-1 2", "2 1 N2-0 0", "2 1.5 R2-2 1", "3 1.5 X3-1 1"]
    path = tmp_path / "qrels-covid_d3_j0.5-3.txt"
    path.write_text("\n".join(lines) + "\n")
    code, out, err = cli("qrels", "import", "covid", "round3", "cumulative", path, "--json")
    assert code == 0, err
    code, _, err = cli("qrels", "export", "covid", "round3", "cumulative", "--out",
                       tmp_path / "back.txt")
    assert code == 0, err
    assert (tmp_path / "back.txt").read_text().splitlines() == lines

    code, out, err = cli("qrels", "import", "covid", "round3", "batch", path, "--split-by",
                         "iteration", "--json")
    assert code == 0, err
    sizes = {s["name"]: s["n_judgments"] for s in json.loads(out)["sets"]}
    assert sizes == {"batch-it0.5": 1, "batch-it1": 2, "batch-it1.5": 2}
    code, _, err = cli("qrels", "export", "covid", "round3", "batch-it1.5", "--format", "beir",
                       "--out", tmp_path / "b.tsv")
    assert code == 0, err
    assert (tmp_path / "b.tsv").read_text().splitlines() == [
        "query-id\tcorpus-id\tscore", "2\tR2-2\t1", "3\tX3-1\t1"]


def test_residual_evaluation_removes_what_was_judged(db: str, tmp_path: Path, cli) -> None:
    """A run into which round-1-judged documents are planted scores, residual of round 1,
    exactly what the same run without them scores."""
    from tcdb.scoring.scores import score_table

    round1 = [(t, f"R{t}-0", 1) for t in TOPICS] + [(t, f"N{t}-4", 0) for t in TOPICS]
    build_snapshot(tmp_path, "covid", "r1", _docs(), TOPICS, round1)
    build_snapshot(tmp_path, "covid", "r2", _docs(), TOPICS, round1)
    later = [(t, f"R{t}-{i}", 1) for t in TOPICS for i in range(1, 5)]
    later += [(t, f"X{t}-{i}", i % 2) for t in TOPICS for i in range(3)]
    cli("qrels", "import", "covid", "r2", "round2", write_qrels_file(tmp_path / "r2.txt", later))
    clean, planted = [], []
    for t in TOPICS:
        ranking = [f"R{t}-{i}" for i in (2, 1)] + [f"X{t}-{i}" for i in range(3)]
        ranking += [f"N{t}-{i}" for i in range(3)] + [f"R{t}-4"]
        clean += [(t, doc, 20.0 - rank) for rank, doc in enumerate(ranking)]
        planted += [(t, doc, 20.0 - rank) for rank, doc in enumerate(ranking)]
        planted += [(t, f"R{t}-0", 19.5), (t, f"N{t}-4", 15.5)]  # judged in round 1
    cli("run", "import", "covid", "r2", write_run_file(tmp_path / "runs", "clean", clean))
    cli("run", "import", "covid", "r2", write_run_file(tmp_path / "runs", "planted", planted))
    measures = ["AP", "nDCG@10", "P@5", "RR"]
    plain = score_table(Database(), "covid", "r2", "round2", measures, ["clean", "planted"],
                        per_topic=True)
    residual = score_table(Database(),
                           "covid", "r2", "round2", measures, ["planted"], per_topic=True,
                           residual_of="r1/original")
    differs = []
    for measure in measures:
        want = plain[(plain["run"] == "clean") & (plain["measure"] == measure)]
        got = residual[residual["measure"] == measure]
        assert got["value"].tolist() == want["value"].tolist(), measure
        unplanted = plain[(plain["run"] == "planted") & (plain["measure"] == measure)]
        differs.append(unplanted["value"].tolist() != want["value"].tolist())
    assert any(differs)  # the planted documents did change the run's own scores
    code, out, err = cli("evaluate", "covid", "r2", "--qrels", "round2", "-m", "AP",
                         "--residual-of", "original", "--run", "planted", "--json")
    assert code == 0 and json.loads(out)["report"]["residual_of"] == "original", err


def test_repeated_document_ids(db: str, tmp_path: Path, cli) -> None:
    from tcdb.catalog.collections import add_collection
    from tcdb.collections.sources.snapshot import LocalSource
    from tcdb.ingest import ingest_snapshot

    add_collection(Database(), "c")
    docs = tmp_path / "docs.trec"
    entries = [("a", "alpha"), ("x", "same text"), ("b", "beta"), ("x", "same  text"),
               ("y", "first text"), ("y", "last text"), ("z", "one"), ("z", "two")]
    docs.write_text("".join(f"<DOC>\n<DOCNO>{d}</DOCNO>\n<TEXT>{t}</TEXT>\n</DOC>\n"
                            for d, t in entries))
    with pytest.raises(InputError, match=r"'y' occurs twice in the snapshot with different "
                       r"texts \(or source labels\): 2 such repeat\(s\), of 'y', 'z'"):
        ingest_snapshot(Database(), "c", "s", LocalSource(docs))
    report = ingest_snapshot(Database(), "c", "s", LocalSource(docs), on_duplicate="last")
    assert (report.n_documents, report.n_repeated, report.n_conflicting) == (5, 1, 2)
    code, out, err = cli("snapshot", "ingest", "c", "s-first", "--docs", docs,
                         "--on-duplicate", "first", "--json")
    assert code == 0, err
    from sqlalchemy import text

    with Database().session() as session:
        texts = dict(session.connection().execute(text(
            "SELECT s.label || '/' || sd.external_id, c.text FROM snapshot_document sd "
            "JOIN snapshot s ON s.id = sd.snapshot_id JOIN content c ON c.id = sd.content_id "
            "WHERE sd.external_id IN ('y', 'z')")).tuples().all())
    assert {k: v.strip() for k, v in texts.items()} == {
        "s/y": "last text", "s/z": "two", "s-first/y": "first text", "s-first/z": "one"}


def test_longeval_queries_that_repeat_a_text(db: str, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch, cli) -> None:
    """Machine translation gave LongEval several query ids one text: each id stays usable for
    its own qrels and runs, and none of them matches a topic of another snapshot."""
    from tcdb.api import snapshot_diff
    from tcdb.catalog.collections import add_collection
    from tcdb.collections.sources.ir_datasets_source import IrdsSource
    from tcdb.collections.sources.records import DocumentRecord, QrelRecord, TopicRecord
    from tcdb.demo.longeval_files import LongEvalSnapshot, write_longeval_web
    from tcdb.ingest import ingest_snapshot
    from tcdb.queries import core_topic_ids

    home = tmp_path / "irds"
    monkeypatch.setenv("IR_DATASETS_HOME", str(home))
    docs = [DocumentRecord(str(1000 + i), f"texte {i}", url=f"https://a.fr/{i}")
            for i in range(6)]
    write_longeval_web(home, {
        "2022-06": LongEvalSnapshot(
            docs, [TopicRecord("q1", "maison à vendre"), TopicRecord("q2", "Voiture occasion"),
                   TopicRecord("q3", "voiture  occasion")],
            [QrelRecord("q1", "1000", 2), QrelRecord("q2", "1001", 1),
             QrelRecord("q3", "1002", 1)]),
        "2022-07": LongEvalSnapshot(
            docs, [TopicRecord("q71", "maison à vendre"), TopicRecord("q72", "voiture occasion")],
            [QrelRecord("q71", "1000", 1), QrelRecord("q72", "1001", 1)]),
        "2023-03": LongEvalSnapshot([DocumentRecord("9", "test")], [TopicRecord("q9", "t")],
                                    None),
    })
    add_collection(Database(), "longeval-web", "url", "text", id_fallback=True)
    june = ingest_snapshot(Database(),
                           "longeval-web", "2022-06", IrdsSource("longeval-web/2022-06"))
    ingest_snapshot(Database(), "longeval-web", "2022-07", IrdsSource("longeval-web/2022-07"))
    assert (june.n_topics, june.n_ambiguous_topics, june.n_judgments) == (3, 2, 3)
    diff = snapshot_diff("longeval-web", ["2022-06", "2022-07"])
    assert diff.topics.kept == 1 and diff.topics.ambiguous.model_dump() == {"before": 2,
                                                                             "after": 0}
    with Database().session() as session:
        assert len(core_topic_ids(session, "longeval-web", ["2022-06", "2022-07"])) == 1

    run = write_run_file(tmp_path / "runs", "r", [("q2", "1001", 2.0), ("q2", "1002", 1.0),
                                                  ("q3", "1001", 2.0), ("q3", "1002", 1.0)])
    code, _, err = cli("run", "import", "longeval-web", "2022-06", run)
    assert code == 0, err
    code, out, err = cli("scores", "longeval-web", "2022-06", "-m", "RR", "--per-topic",
                         "--json")
    assert code == 0, err
    rr = {r["topic"]: r["value"] for r in json.loads(out)["scores"]}
    assert rr == {"q1": 0.0, "q2": 1.0, "q3": 0.5}
    code, out, _ = cli("snapshot", "diff", "longeval-web", "2022-06", "2022-07")
    assert "ambiguous in 2022-06 (left out of the core)" in out


def test_a_grade_scale_cannot_narrow_under_stored_grades(db: str, tmp_path: Path,
                                                         cli) -> None:
    from tcdb.catalog.collections import add_collection

    build_snapshot(tmp_path, "c", "s", _docs(), TOPICS, [("1", "N1-0", -1), ("1", "R1-0", 2)])
    with pytest.raises(ConflictError, match="graded -1 to 2; the scale 0:2 would leave"):
        add_collection(Database(), "c", grade_min=0, grade_max=2)
    code, _, err = cli("collection", "add", "c", "--grades", "0:2")
    assert code == 1 and "graded -1 to 2" in err
    add_collection(Database(), "c", grade_min=-2, grade_max=3)  # wider: fine
    with pytest.raises(ConflictError, match="scale -2:1"):
        add_collection(Database(), "c", grade_max=1)


def test_options_name_themselves() -> None:
    with pytest.raises(FieldError, match="split_by"):
        from tcdb.judging.qrels import import_qrels

        import_qrels(Database(), "c", "s", "n", "x", split_by="topic")
