"""The persistence report on SQLite and PostgreSQL: fidelity against repro_eval 0.5.0 and scipy.

* Real per-topic scores (WCrobust04 pivot, WCrobust0405 experimental; TREC Core17 = first
  snapshot, Core18 re-implementations = later snapshots), imported with `tcdb scores import`;
  read in place from `../shared/anchors/repro_eval/`, skipped without them except under CI=true.
* A synthetic three-snapshot collection whose topics are re-numbered (topic identity `text`),
  scored by tcdb from run files; `--topics core` aligns the snapshots by query text.
* Planted effects: an advantage that halves gives ER ≈ 0.5, one that is kept ER ≈ 1.
"""

from __future__ import annotations

import csv
import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
from repro_eval.measure.overall_effects import DRI, ER
from repro_eval.measure.statistics import ttest
from scipy import stats

from tcdb.errors import ConflictError, InputError, NotFoundError
from tests.builders import build_snapshot, repro_eval_anchors, write_run_file

# file suffix → (trec_eval name written to the -q file, ir_measures name the report uses)
MEASURES = {"ap": ("map", "AP"), "p10": ("P_10", "P@10"), "ndcg10": ("ndcg_cut_10", "nDCG@10"),
            "ndcg100": ("ndcg_cut_100", "nDCG@100"),
            "ndcg1000": ("ndcg_cut_1000", "nDCG@1000")}
PIVOT, EXPERIMENTAL = "WCrobust04", "WCrobust0405"


def _anchors() -> Path:
    return repro_eval_anchors()


def _read_csv(path: Path) -> dict[str, dict[str, float]]:
    """column → {topic: value}, parsed with float() (exact round trip)."""
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    header, body = rows[0], rows[1:]
    return {column: {row[0]: float(row[i]) for row in body}
            for i, column in enumerate(header) if i > 0}


def _trec_eval_file(path: Path, tag: str, by_measure: dict[str, dict[str, float]]) -> Path:
    """A `trec_eval -q` output: `measure<TAB>topic<TAB>value`, values at full precision."""
    lines = [f"runid\tall\t{tag}"]
    for trec_name, values in by_measure.items():
        lines += [f"{trec_name}\t{topic}\t{value!r}" for topic, value in values.items()]
        lines.append(f"{trec_name}\tall\t{sum(values.values()) / len(values)!r}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _nested(values: dict[str, float], measure: str) -> dict[str, dict[str, float]]:
    return {topic: {measure: value} for topic, value in values.items()}


@pytest.fixture
def core(db: str, tmp_path: Path, cli) -> dict[str, Any]:
    """Every constellation both runs share (50)."""
    return _build_core(tmp_path, cli, limit=None)


@pytest.fixture
def core_one(db: str, tmp_path: Path, cli) -> dict[str, Any]:
    """The first constellation only, for the CLI test."""
    return _build_core(tmp_path, cli, limit=1)


def _build_core(tmp_path: Path, cli: Any, limit: int | None) -> dict[str, Any]:
    """Core17 (50 topics) as snapshot `core17`, constellation N on Core18 (25) as `core18-N`."""
    folder = _anchors() / "per_topic_scores"
    data: dict[str, dict[str, dict[str, dict[str, float]]]] = {}  # suffix → file → col → values
    for suffix in MEASURES:
        data[suffix] = {
            name: _read_csv(folder / f"{name}_{suffix}.csv")
            for name in ("org_wcrobust04", "org_wcrobust0405", "rpd_wcrobust04",
                         "rpd_wcrobust0405")}
    common = sorted(
        set(c.rsplit("_", 1)[1] for c in data["ap"]["rpd_wcrobust04"])
        & set(c.rsplit("_", 1)[1] for c in data["ap"]["rpd_wcrobust0405"]), key=int)
    constellations = common[:limit]
    org_topics = list(data["ap"]["org_wcrobust04"][PIVOT])
    rpd_topics = list(data["ap"]["rpd_wcrobust04"]["rpd_wcrobust04_1"])
    build_snapshot(tmp_path, "core", "core17", {"d0": "dummy"},
                   {t: f"topic {t}" for t in org_topics}, [(t, "d0", 1) for t in org_topics])
    for n in constellations:
        build_snapshot(tmp_path, "core", f"core18-{n}", {"d0": "dummy"},
                       {t: f"topic {t}" for t in rpd_topics}, [(t, "d0", 1) for t in rpd_topics])

    def load(snapshot: str, tag: str, system: str, file: str, column: str) -> None:
        by_measure = {trec: data[suffix][file][column] for suffix, (trec, _) in MEASURES.items()}
        path = _trec_eval_file(tmp_path / f"{tag}.{snapshot}.trec_eval", tag, by_measure)
        code, _, err = cli("scores", "import", "core", snapshot, path, "--qrels", "original",
                           "--run", tag, "--system", system)
        assert code == 0, err

    load("core17", "input.WCrobust04", PIVOT, "org_wcrobust04", PIVOT)
    load("core17", "input.WCrobust0405", EXPERIMENTAL, "org_wcrobust0405", EXPERIMENTAL)
    for n in constellations:
        for system, file in ((PIVOT, "rpd_wcrobust04"), (EXPERIMENTAL, "rpd_wcrobust0405")):
            load(f"core18-{n}", f"{file}_{n}", system, file, f"{file}_{n}")
    return {"data": data, "constellations": constellations}


def test_er_dri_and_p_values_equal_repro_eval_on_core17_core18(core: dict[str, Any]) -> None:
    from tcdb.api import persistence

    data, constellations = core["data"], core["constellations"]
    snapshots = ["core17", *[f"core18-{n}" for n in constellations]]
    names = [irm for _, irm in MEASURES.values()]
    report = persistence("core", snapshots=snapshots, pivot=PIVOT, measures=names)
    assert report.snapshots == snapshots
    assert report.topics.n_topics == {"core17": 50, **{s: 25 for s in snapshots[1:]}}
    checked = 0
    for suffix, (_, name) in MEASURES.items():
        result = report.measures[name]
        assert result.skipped == []
        pivot, experimental = result.systems
        assert (pivot.system, pivot.is_pivot) == (PIVOT, True)
        assert (experimental.system, experimental.is_pivot) == (EXPERIMENTAL, False)
        org_b = data[suffix]["org_wcrobust04"][PIVOT]
        org_a = data[suffix]["org_wcrobust0405"][EXPERIMENTAL]
        for n in constellations:
            later = f"core18-{n}"
            rep_b = data[suffix]["rpd_wcrobust04"][f"rpd_wcrobust04_{n}"]
            rep_a = data[suffix]["rpd_wcrobust0405"][f"rpd_wcrobust0405_{n}"]
            args = [_nested(x, name) for x in (org_a, org_b, rep_a, rep_b)]
            assert experimental.er[later] == pytest.approx(ER(*args)[name], abs=1e-9)
            assert experimental.delta_ri[later] == pytest.approx(DRI(*args)[name], abs=1e-9)
            p_oracle = stats.ttest_ind(list(org_a.values()), list(rep_a.values())).pvalue
            assert experimental.p_value[later] == pytest.approx(p_oracle, abs=1e-12)
            assert experimental.p_value[later] == pytest.approx(
                ttest(args[0], args[2], rpd=False)[name], abs=1e-12)
            p_pivot = stats.ttest_ind(list(org_b.values()), list(rep_b.values())).pvalue
            assert pivot.p_value[later] == pytest.approx(p_pivot, abs=1e-12)
            assert (pivot.er[later], pivot.delta_ri[later]) == (None, None)  # 0/0
            arp_first = sum(org_a.values()) / len(org_a)
            arp_later = sum(rep_a.values()) / len(rep_a)
            assert experimental.arp[later] == pytest.approx(arp_later, abs=1e-12)
            assert experimental.result_delta[later] == pytest.approx(
                arp_first - arp_later, abs=1e-12)
            assert experimental.relative_change[later] == pytest.approx(
                (arp_first - arp_later) / arp_first, abs=1e-12)
            checked += 1
    assert checked == len(MEASURES) * len(constellations)


def test_cli_json_and_per_topic_csv_on_the_anchors(core_one: dict[str, Any], cli,
                                                   tmp_path: Path) -> None:
    from tcdb.api import persistence

    core = core_one
    n = core["constellations"][0]
    later = f"core18-{n}"
    csv_path = tmp_path / "deltas.csv"
    code, out, err = cli("report", "persistence", "core", "--snapshots", "core17", later,
                         "--pivot", PIVOT, "--measure", "AP", "--measure", "ndcg_cut_10",
                         "--per-topic", csv_path, "--json")
    assert code == 0, err
    shown = json.loads(out)
    assert shown == json.loads(json.dumps(persistence(
        "core", snapshots=["core17", later], pivot=PIVOT, measures=["AP", "nDCG@10"]).to_json()))
    with csv_path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 2 * (50 + 25)  # two measures, one non-pivot system, 50 + 25 topics
    org_a = core["data"]["ap"]["org_wcrobust0405"][EXPERIMENTAL]
    org_b = core["data"]["ap"]["org_wcrobust04"][PIVOT]
    first = {r["topic"]: r for r in rows if r["measure"] == "AP" and r["snapshot"] == "core17"}
    for topic, row in first.items():
        assert row["system"] == EXPERIMENTAL
        assert float(row["delta"]) == pytest.approx(org_a[topic] - org_b[topic], abs=1e-12)
        assert float(row["score"]) - float(row["pivot_score"]) == pytest.approx(
            float(row["delta"]), abs=1e-12)
    code, out, err = cli("report", "persistence", "core", "--snapshots", "core17", later,
                         "--pivot", PIVOT, "--measure", "AP")
    assert code == 0, err
    assert "pivot WCrobust04" in out and "ΔRI" in out and "WCrobust0" in out


# --- a synthetic LongEval-like collection: three snapshots, re-numbered topics ---------------

QUERIES = ["cheap flights", "weather paris", "python tutorial", "used cars", "electric bikes",
           "garden tools"]
SNAPSHOTS = {  # external id → query text; the ids change every snapshot
    "2023-01": {"q1": "cheap flights", "q2": "weather paris", "q3": "python tutorial",
                "q4": "used cars"},
    "2023-06": {"q101": "weather paris", "q102": "cheap flights", "q103": "python tutorial",
                "q104": "electric bikes"},
    "2024-01": {"x7": "python tutorial", "x8": "cheap flights", "x9": "weather paris",
                "x10": "used cars", "x11": "garden tools"},
}
CORE = {"cheap flights", "weather paris", "python tutorial"}
DOCS = {f"d{i}": f"document {i}" for i in range(8)}
SYSTEMS = ("bm25", "dense", "splade")


def _synthetic(tmp_path: Path) -> dict[str, Any]:
    """Ingest the three snapshots, import one run per system each; return what the oracle needs.

    Qrels and runs are drawn per query *text* with a seeded RNG, so the same query keeps its
    judgments while its id changes.
    """
    from tcdb.runs import import_run

    rng = random.Random(7)
    qrels_by_text = {q: {d: rng.choice([0, 1, 1, 2]) for d in rng.sample(sorted(DOCS), 5)}
                     for q in QUERIES}
    for q in QUERIES:
        qrels_by_text[q][rng.choice(sorted(qrels_by_text[q]))] = 2  # at least one relevant
    runs: dict[str, dict[str, dict[str, dict[str, float]]]] = {}  # snap → system → topic → run
    for label, topics in SNAPSHOTS.items():
        qrels = [(t, d, g) for t, q in topics.items() for d, g in qrels_by_text[q].items()]
        build_snapshot(tmp_path, "le", label, DOCS, topics, qrels, topic_identity="text")
        runs[label] = {}
        for system in SYSTEMS:
            rows, as_dict = [], {}
            for topic in topics:
                docs = rng.sample(sorted(DOCS), 6)
                as_dict[topic] = {d: float(10 - i) for i, d in enumerate(docs)}
                rows += [(topic, d, float(10 - i)) for i, d in enumerate(docs)]
            path = write_run_file(tmp_path / "runs" / label, f"{system}-{label}", rows)
            import_run("le", label, path, system=system)
            runs[label][system] = as_dict
    return {"qrels": qrels_by_text, "runs": runs}


def _oracle_scores(world: dict[str, Any], measure: str) -> dict[str, dict[str, dict[str, float]]]:
    """snapshot → system → query text → score, by ir_measures run on the same data directly."""
    import ir_measures

    parsed = ir_measures.parse_measure(measure)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for label, topics in SNAPSHOTS.items():
        qrels = {t: world["qrels"][q] for t, q in topics.items()}
        out[label] = {}
        for system, run in world["runs"][label].items():
            values = {m.query_id: m.value for m in ir_measures.iter_calc([parsed], qrels, run)}
            out[label][system] = {topics[t]: float(values.get(t, 0.0)) for t in topics}
    return out


@pytest.mark.parametrize("selection", ["core", "all"])
def test_renumbered_topics_align_by_text_under_core(db: str, tmp_path: Path,
                                                    selection: str) -> None:
    from tcdb.api import persistence

    world = _synthetic(tmp_path)
    labels = list(SNAPSHOTS)
    report = persistence("le", snapshots=labels, pivot="bm25", measures=["nDCG@10", "AP"],
                         topics=selection)
    expected_n = {s: (3 if selection == "core" else len(t)) for s, t in SNAPSHOTS.items()}
    assert report.topics.n_topics == expected_n
    for measure in ("nDCG@10", "AP"):
        oracle = _oracle_scores(world, measure)
        if selection == "core":  # same texts, hence the same topics, in every snapshot
            oracle = {s: {sys: {q: v for q, v in by_q.items() if q in CORE}
                          for sys, by_q in by_sys.items()} for s, by_sys in oracle.items()}
        records = {r.system: r for r in report.measures[measure].systems}
        assert list(records) == ["bm25", "dense", "splade"]
        pivot = {s: oracle[s]["bm25"] for s in labels}
        first = labels[0]
        for system in ("dense", "splade"):
            for later in labels[1:]:
                args = [_nested(oracle[first][system], measure), _nested(pivot[first], measure),
                        _nested(oracle[later][system], measure), _nested(pivot[later], measure)]
                if selection == "core":  # repro_eval pairs topics by key: texts align them
                    assert set(args[0]) == set(args[2]) == CORE
                assert records[system].er[later] == pytest.approx(ER(*args)[measure],
                                                                     abs=1e-9)
                assert records[system].delta_ri[later] == pytest.approx(
                    DRI(*args)[measure], abs=1e-9)
                p = stats.ttest_ind(list(oracle[first][system].values()),
                                    list(oracle[later][system].values())).pvalue
                assert records[system].p_value[later] == pytest.approx(p, abs=1e-12)


def test_per_topic_deltas_carry_each_snapshots_ids_and_the_shared_key(db: str,
                                                                      tmp_path: Path) -> None:
    from tcdb.api import per_topic_deltas

    world = _synthetic(tmp_path)
    frame = per_topic_deltas("le", snapshots=list(SNAPSHOTS), pivot="bm25",
                             measures=["nDCG@10"], topics="core").to_frame()
    assert list(frame.columns) == ["measure", "system", "snapshot", "topic", "topic_id",
                                   "topic_key", "score", "pivot_score", "delta"]
    assert len(frame) == 2 * 3 * 3  # two non-pivot systems, three snapshots, three core topics
    oracle = _oracle_scores(world, "nDCG@10")
    for row in frame.itertuples():
        text = SNAPSHOTS[row.snapshot][row.topic]
        assert row.topic_key == text  # the identity across snapshots
        assert row.delta == pytest.approx(oracle[row.snapshot][row.system][text]
                                          - oracle[row.snapshot]["bm25"][text], abs=1e-12)
    # one topic, three external ids, one topic_id
    flights = frame[(frame["topic_key"] == "cheap flights") & (frame["system"] == "dense")]
    assert sorted(flights["topic"]) == ["q1", "q102", "x8"]
    assert flights["topic_id"].nunique() == 1


def test_topic_set_restricts_every_snapshot(db: str, tmp_path: Path, cli) -> None:
    from tcdb.api import persistence, topic_set_create

    _synthetic(tmp_path)
    topic_set_create("travel", "le", "2023-01", topic_ids=["q1", "q2"])  # flights, weather
    report = persistence("le", snapshots=list(SNAPSHOTS), pivot="bm25", measures=["AP"],
                         topics="travel")
    assert report.topics.model_dump() == {"selection": "travel",
                                "n_topics": {"2023-01": 2, "2023-06": 2, "2024-01": 2}}
    code, out, err = cli("report", "persistence", "le", "--snapshots", "2023-01", "2023-06",
                         "2024-01", "--pivot", "bm25", "--measure", "AP", "--topics", "travel",
                         "--json")
    assert code == 0, err
    assert json.loads(out) == json.loads(json.dumps(report.to_json()))
    code, _, err = cli("report", "persistence", "le", "--snapshots", "2023-01", "2023-06",
                       "--pivot", "bm25", "--measure", "AP", "--topics", "nope")
    assert code == 1 and "no topic set 'nope'" in err


def test_bootstrap_intervals_are_seeded_and_bracket_the_estimate(db: str, tmp_path: Path,
                                                                 cli) -> None:
    from tcdb.api import persistence

    _synthetic(tmp_path)
    labels = ["2023-01", "2024-01"]
    one = persistence("le", snapshots=labels, pivot="bm25", measures=["nDCG@10"],
                      bootstrap=300, seed=3)
    two = persistence("le", snapshots=labels, pivot="bm25", measures=["nDCG@10"],
                      bootstrap=300, seed=3)
    assert one == two
    assert one.bootstrap.model_dump() == {"n_samples": 300, "seed": 3, "alpha": 0.05}
    for record in one.measures["nDCG@10"].systems:
        ci = record.ci
        for label in labels:
            arp = ci["arp"][label]
            assert arp["estimate"] == pytest.approx(record.arp[label], abs=1e-12)
            assert arp["low"] <= arp["estimate"] <= arp["high"]
        if record.is_pivot:
            assert ci["er"] == {} and ci["delta_ri"] == {}
        else:
            assert ci["er"]["2024-01"]["n_samples"] == 300
    code, out, err = cli("report", "persistence", "le", "--snapshots", "2023-01", "2024-01",
                         "--pivot", "bm25", "--measure", "nDCG@10", "--bootstrap", "50")
    assert code == 0, err
    assert "bootstrap intervals" in out
    figures = {line.split()[1] for line in out.splitlines()[3:] if line.strip()}
    assert {"ARP", "RΔ", "ER", "ΔRI"} <= figures and "result_delta" not in out  # the field's words


# --- planted effects -------------------------------------------------------------------------

def _import_scores(tmp_path: Path, snapshot: str, tag: str, system: str,
                   values: dict[str, float]) -> None:
    from tcdb.scoring.scores import import_scores

    path = tmp_path / f"{tag}.tsv"
    path.write_text("".join(f"{t}\tAP\t{v!r}\n" for t, v in values.items()))
    import_scores("planted", snapshot, "original", tag, path, system)


def test_planted_effects_give_er_one_half_and_one(db: str, tmp_path: Path) -> None:
    from tcdb.api import persistence

    rng = random.Random(11)
    topics = {"A": [str(t) for t in range(1, 41)], "B": [str(t) for t in range(101, 141)]}
    for label, ids in topics.items():
        build_snapshot(tmp_path, "planted", label, {"d0": "dummy"},
                       {t: f"query {t}" for t in ids}, [(t, "d0", 1) for t in ids])
    advantage = {"A": {"halves": 0.2, "keeps": 0.2}, "B": {"halves": 0.1, "keeps": 0.2}}
    for label, ids in topics.items():
        pivot = {t: rng.uniform(0.2, 0.6) for t in ids}
        _import_scores(tmp_path, label, f"pivot-{label}", "pivot", pivot)
        for system in ("halves", "keeps"):
            noisy = {t: pivot[t] + advantage[label][system] + rng.gauss(0, 0.01) for t in ids}
            _import_scores(tmp_path, label, f"{system}-{label}", system, noisy)
    report = persistence("planted", snapshots=["A", "B"], pivot="pivot", measures=["AP"])
    records = {r.system: r for r in report.measures["AP"].systems}
    assert records["halves"].er["B"] == pytest.approx(0.5, abs=0.05)
    assert records["keeps"].er["B"] == pytest.approx(1.0, abs=0.05)
    assert records["halves"].delta_ri["B"] > records["keeps"].delta_ri["B"]
    assert records["pivot"].is_pivot and records["pivot"].er["B"] is None  # 0/0


# --- bad input: a clear error, one test each -------------------------------------------------

@pytest.fixture
def planted(db: str, tmp_path: Path) -> Path:
    """Two snapshots; systems `p` and `s` in both, `only-a` in the first only."""
    for label in ("A", "B"):
        build_snapshot(tmp_path, "planted", label, {"d0": "dummy"},
                       {"1": "one", "2": "two", "3": "three"}, [(t, "d0", 1) for t in "123"])
        for system, shift in (("p", 0.0), ("s", 0.1)):
            _import_scores(tmp_path, label, f"{system}-{label}", system,
                           {"1": 0.2 + shift, "2": 0.4 + shift, "3": 0.3})
    _import_scores(tmp_path, "A", "only-a", "only-a", {"1": 0.5})
    return tmp_path


def test_system_without_a_run_in_every_snapshot_is_listed_as_skipped(planted: Path) -> None:
    from tcdb.api import persistence

    report = persistence("planted", snapshots=["A", "B"], pivot="p", measures=["AP"])
    assert [r.system for r in report.measures["AP"].systems] == ["p", "s"]
    assert [s.model_dump() for s in report.measures["AP"].skipped] == [
        {"system": "only-a", "reason": "no run in snapshot 'B'", "kind": "no_run"}]


def test_unknown_pivot_is_not_found(planted: Path, cli) -> None:
    code, _, err = cli("report", "persistence", "planted", "--snapshots", "A", "B", "--pivot",
                       "bm25", "--measure", "AP")
    assert code == 1 and "no system 'bm25'" in err and "systems: p, s" in err


def test_pivot_missing_from_a_snapshot_is_not_found(planted: Path) -> None:
    from tcdb.api import persistence

    with pytest.raises(NotFoundError, match="pivot system 'only-a': no run in snapshot 'B'"):
        persistence("planted", snapshots=["A", "B"], pivot="only-a", measures=["AP"])


def test_pivot_with_two_runs_in_a_snapshot_is_a_conflict(planted: Path) -> None:
    from tcdb.api import persistence

    _import_scores(planted, "B", "p-again", "p", {"1": 0.1})
    with pytest.raises(ConflictError, match="2 runs in snapshot 'B'"):
        persistence("planted", snapshots=["A", "B"], pivot="p", measures=["AP"])


def test_measure_without_scores_is_not_found(planted: Path) -> None:
    from tcdb.api import persistence

    with pytest.raises(NotFoundError, match="has no nDCG@10 scores on qrels 'original'"):
        persistence("planted", snapshots=["A", "B"], pivot="p", measures=["nDCG@10"])


def test_one_snapshot_is_refused(planted: Path, cli) -> None:
    code, _, err = cli("report", "persistence", "planted", "--snapshots", "A", "--pivot", "p",
                       "--measure", "AP")
    assert code == 1 and "at least two snapshots" in err


def test_a_snapshot_named_twice_is_refused(planted: Path) -> None:
    from tcdb.api import persistence

    with pytest.raises(InputError, match="named twice: A"):
        persistence("planted", snapshots=["A", "A"], pivot="p", measures=["AP"])


def test_unknown_snapshot_is_not_found(planted: Path) -> None:
    from tcdb.api import persistence

    with pytest.raises(NotFoundError, match="no complete snapshot 'C'"):
        persistence("planted", snapshots=["A", "C"], pivot="p", measures=["AP"])


def test_qrels_names_must_match_the_snapshots(planted: Path) -> None:
    from tcdb.api import persistence

    with pytest.raises(InputError, match="3 snapshots, 2 names"):
        persistence("planted", snapshots=["A", "B", "C"], pivot="p", measures=["AP"],
                    qrels=["x", "y"])


def test_unknown_qrels_set_is_not_found(planted: Path) -> None:
    from tcdb.api import persistence

    with pytest.raises(NotFoundError, match="no qrels set 'expanded'"):
        persistence("planted", snapshots=["A", "B"], pivot="p", measures=["AP"],
                    qrels=["original", "expanded"])


def test_unknown_measure_is_refused(planted: Path) -> None:
    from tcdb.api import persistence

    with pytest.raises(InputError, match="not a measure"):
        persistence("planted", snapshots=["A", "B"], pivot="p", measures=["nonsense"])


def test_negative_bootstrap_is_refused(planted: Path) -> None:
    from tcdb.api import persistence

    with pytest.raises(InputError, match="cannot be negative"):
        persistence("planted", snapshots=["A", "B"], pivot="p", measures=["AP"], bootstrap=-1)


def test_core_without_shared_topics_is_refused(db: str, tmp_path: Path) -> None:
    from tcdb.api import persistence

    for label, ids in (("A", ["1", "2"]), ("B", ["3", "4"])):
        build_snapshot(tmp_path, "planted", label, {"d0": "dummy"},
                       {t: f"q{t}" for t in ids}, [(t, "d0", 1) for t in ids])
        for system in ("p", "s"):
            _import_scores(tmp_path, label, f"{system}-{label}", system, {ids[0]: 0.5})
    with pytest.raises(InputError, match="no judged topics in the 'core' selection"):
        persistence("planted", snapshots=["A", "B"], pivot="p", measures=["AP"], topics="core")
    # and without `core` the two snapshots are compared over their own topics
    report = persistence("planted", snapshots=["A", "B"], pivot="p", measures=["AP"])
    assert report.topics.n_topics == {"A": 2, "B": 2}
    assert not math.isnan(report.measures["AP"].systems[0].arp["A"])
