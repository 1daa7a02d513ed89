"""Breuer et al.'s repro_eval data (SIGIR 2020), generated: the same files in the same formats.

The real data (`../shared/anchors/repro_eval`, read in place when present) is the original
TREC Core17 runs `input.WCrobust04` (baseline) and `input.WCrobust0405` (advanced), their
re-implementations on Core17 itself (`rpl_*`, "constellations" 1…N) and on Core18 (`rpd_*`),
the two qrels files and the per-topic scores of every run. `write_anchors` writes that layout
from a seed, so a checkout without `../shared` runs every oracle test:

* `qrels/core17.txt`, `qrels/core18.txt` — TREC qrels (`topic 0 doc grade`), graded 0–2, with
  unjudged retrieved documents; the two collections share some topics and not others.
* `runs/` — TREC run files (`topic Q0 doc rank score tag`): the two originals on core17 and, per
  constellation, a baseline and an advanced re-implementation on core17 (`rpl_…_N`) and on
  core18 (`rpd_…_N`). Scores have one decimal, so rankings have ties (trec_eval breaks them by
  document id, descending); one constellation answers one topic not at all (a missing topic),
  one retrieves no relevant document for some topics (zero scores).
* `per_topic_scores/*.csv` — `Row` (topic) then one column per run, as in the real files,
  computed by repro_eval's own evaluators (`RpdEvaluator` on core17, `RplEvaluator` on core18).
  A judged topic a run does not answer is written as 0, as `trec_eval -q -c` prints it.

The file names keep the real ones (`org_wcrobust04_ap.csv`, column `rpd_wcrobust0405_7`, …) so
a test reads either source with the same code.
"""

from __future__ import annotations

import os
import random
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# file suffix → ir_measures name (repro_eval 0.5.0 names measures as ir_measures does)
MEASURES = {"ap": "AP", "p10": "P@10", "ndcg10": "nDCG@10", "ndcg100": "nDCG@100",
            "ndcg1000": "nDCG@1000"}
BASELINE, ADVANCED = "WCrobust04", "WCrobust0405"
FILES = {BASELINE: "wcrobust04", ADVANCED: "wcrobust0405"}  # system → file stem


@dataclass(frozen=True)
class Anchors:
    """One source of the data and what a test may expect of it."""

    name: str
    folder: Path
    n_original_topics: int  # core17
    n_other_topics: int  # core18, as the rpd_* files have them
    n_shared_topics: int  # core18's topics that core17 has too
    min_constellations: int  # constellations with both a baseline and an advanced rpd_* run

    @property
    def scores(self) -> Path:
        return self.folder / "per_topic_scores"


def real_anchors() -> Anchors | None:
    """The real data: `TCDB_REPRO_EVAL_ANCHORS`, else `shared/anchors/repro_eval` in a folder
    that holds the checkout; None without it (the generated data stands in)."""
    here = Path(__file__).resolve()
    candidates = [Path(p) for p in [os.environ.get("TCDB_REPRO_EVAL_ANCHORS")] if p]
    candidates += [folder / "shared" / "anchors" / "repro_eval" for folder in here.parents[1:]]
    for folder in candidates:
        if (folder / "per_topic_scores").is_dir():
            return Anchors("breuer2020", folder, 50, 25, 25, 50)
    return None


def sources() -> list[str]:
    """The sources an oracle test runs on: the generated data always, the real where present."""
    return ["generated"] + (["breuer2020"] if real_anchors() else [])


# --- the generated collections --------------------------------------------------------------

CORE17 = [str(t) for t in range(301, 325)]  # 24 topics
CORE18 = CORE17[:8] + [str(t) for t in range(801, 805)]  # 12: 8 shared, 4 of its own
CONSTELLATIONS = 8
DOCS_PER_TOPIC = 60
RUN_LENGTH = 40
GENERATED = dict(n_original_topics=len(CORE17), n_other_topics=len(CORE18),
                 n_shared_topics=len(set(CORE17) & set(CORE18)), min_constellations=CONSTELLATIONS)


def _qrels(rng: random.Random, topics: list[str], collection: str) -> dict[str, dict[str, int]]:
    """Per topic: 25 of its documents judged, at least two relevant."""
    qrels: dict[str, dict[str, int]] = {}
    for topic in topics:
        docs = rng.sample(_docs(topic, collection), 25)
        grades = {doc: rng.choice([0, 0, 0, 1, 1, 2]) for doc in docs}
        grades[docs[0]], grades[docs[1]] = 2, 1
        qrels[topic] = grades
    return qrels


def _docs(topic: str, collection: str) -> list[str]:
    return [f"{collection}-{topic}-{i:03d}" for i in range(DOCS_PER_TOPIC)]


def _run(rng: random.Random, qrels: dict[str, dict[str, int]], collection: str, skill: float,
         *, skip: frozenset[str] = frozenset(), blind: frozenset[str] = frozenset(),
         ) -> dict[str, dict[str, float]]:
    """A ranking per topic: relevant documents are pushed up by `skill`; scores are rounded to
    one decimal (ties). `skip`: topics not answered; `blind`: topics answered with judged
    non-relevant or unjudged documents only."""
    run: dict[str, dict[str, float]] = {}
    for topic, grades in qrels.items():
        if topic in skip:
            continue
        candidates = [d for d in _docs(topic, collection)
                      if not (topic in blind and grades.get(d, 0) > 0)]
        scored = {d: round(rng.uniform(0, 10) + skill * grades.get(d, 0), 1) for d in candidates}
        ranked = sorted(scored.items(), key=lambda item: (-item[1], item[0]))[:RUN_LENGTH]
        run[topic] = dict(ranked)
    return run


def _write_qrels(path: Path, qrels: Mapping[str, Mapping[str, int]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{t} 0 {d} {g}\n" for t, grades in qrels.items()
                            for d, g in grades.items()))
    return path


def _write_run(path: Path, tag: str, run: Mapping[str, Mapping[str, float]]) -> Path:
    """`topic Q0 doc rank score tag`, highest score first; tied documents in ascending id
    order, as many systems write them: trec_eval ignores the rank column and puts them in
    descending order (so does repro_eval's `break_ties`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for topic, docs in run.items():
        ranked = sorted(docs.items(), key=lambda item: (-item[1], item[0]))
        lines += [f"{topic} Q0 {d} {r} {s:.1f} {tag}\n" for r, (d, s) in enumerate(ranked, 1)]
    path.write_text("".join(lines))
    return path


def write_anchors(folder: Path, seed: int = 2020) -> Anchors:
    """Write qrels, runs and repro_eval's per-topic scores under `folder` (deterministic)."""
    rng = random.Random(seed)
    qrels = {"core17": _qrels(rng, CORE17, "core17"), "core18": _qrels(rng, CORE18, "core18")}
    qrels_path = {c: _write_qrels(folder / "qrels" / f"{c}.txt", q) for c, q in qrels.items()}
    runs = folder / "runs"
    skill = {BASELINE: 1.5, ADVANCED: 3.0}
    original = {s: _write_run(runs / f"input.{s}", s, _run(rng, qrels["core17"], "core17", k))
                for s, k in skill.items()}
    rep: dict[str, dict[str, dict[int, Path]]] = {"rpl": {}, "rpd": {}}  # kind → system → n
    for kind, collection in (("rpl", "core17"), ("rpd", "core18")):
        for system, stem in FILES.items():
            rep[kind][system] = {}
            for n in range(1, CONSTELLATIONS + 1):
                # the advanced system's edge: lost (n = 1), as in the original (n = 4), larger
                k = skill[system] * 0.25 * n if system == ADVANCED else skill[system]
                missing = (kind, n, system) == ("rpd", 2, ADVANCED)
                skip = frozenset(CORE18[-1:]) if missing else frozenset()
                blind = frozenset(list(qrels[collection])[:3]) if n == 3 else frozenset()
                tag = f"{kind}_{stem}_{n}"
                rep[kind][system][n] = _write_run(
                    runs / tag, tag,
                    _run(rng, qrels[collection], collection, k, skip=skip, blind=blind))
    _write_scores(folder / "per_topic_scores", qrels, qrels_path, original, rep)
    return Anchors("generated", folder, **GENERATED)


def only_measures(evaluator: Any) -> Any:
    """The evaluator set to compute the five measures of the files (not all of trec_eval's)."""
    import ir_measures

    evaluator.measures = [ir_measures.parse_measure(name) for name in MEASURES.values()]
    return evaluator


def complete(scores: dict[str, dict[str, float]],
             qrels: Mapping[str, object]) -> dict[str, dict[str, float]]:
    """repro_eval's per-topic scores with 0 for each judged topic the run did not answer
    (`trec_eval -c`), in topic order."""
    measures = next(iter(scores.values())).keys()
    return {t: dict(scores.get(t) or dict.fromkeys(measures, 0.0)) for t in sorted(qrels, key=int)}


def _write_scores(folder: Path, qrels: dict[str, dict[str, dict[str, int]]],
                  qrels_path: dict[str, Path], original: dict[str, Path],
                  rep: dict[str, dict[str, dict[int, Path]]]) -> None:
    """per_topic_scores/{org,rpl,rpd}_<stem>_<suffix>.csv by repro_eval's evaluators."""
    from repro_eval.Evaluator import RpdEvaluator, RplEvaluator

    folder.mkdir(parents=True, exist_ok=True)
    columns: dict[str, dict[str, dict[str, dict[str, float]]]] = {}  # file stem → column → scores
    for system, stem in FILES.items():
        same = only_measures(RpdEvaluator(qrels_orig_path=str(qrels_path["core17"]),
                                          run_b_orig_path=str(original[system])))
        same.evaluate()
        assert same.run_b_orig_score is not None
        org = complete(same.run_b_orig_score, qrels["core17"])
        columns[f"org_{stem}"] = {system: org}
        columns[f"rpl_{stem}"] = {system: org}
        columns[f"rpd_{stem}"] = {}
        other = only_measures(RplEvaluator(qrels_orig_path=str(qrels_path["core17"]),
                                           qrels_rpl_path=str(qrels_path["core18"])))
        for n in sorted(rep["rpl"][system], key=str):  # the real files' column order: 1, 10, 2 …
            columns[f"rpl_{stem}"][f"rpl_{stem}_{n}"] = complete(
                same.evaluate(run_path=str(rep["rpl"][system][n])), qrels["core17"])
            columns[f"rpd_{stem}"][f"rpd_{stem}_{n}"] = complete(
                other.evaluate(run_path=str(rep["rpd"][system][n])), qrels["core18"])
    for stem, by_column in columns.items():
        for suffix, measure in MEASURES.items():
            topics = list(next(iter(by_column.values())))
            lines = ["Row," + ",".join(by_column)]
            lines += [",".join([t, *(repr(float(s[t][measure])) for s in by_column.values())])
                      for t in topics]
            (folder / f"{stem}_{suffix}.csv").write_text("\n".join(lines) + "\n")


def anchors(source: str, folder: Path) -> Anchors:
    """The named source; `generated` is written under `folder` once per folder."""
    if source == "breuer2020":
        found = real_anchors()
        assert found is not None  # listed by `sources()` only when present
        return found
    if (folder / "per_topic_scores").is_dir():
        return Anchors("generated", folder, **GENERATED)
    return write_anchors(folder)
