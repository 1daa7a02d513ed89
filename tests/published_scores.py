"""Official-looking per-topic scores of five systems over three snapshots, written as
`trec_eval -q` output (one file per system and snapshot) and as one tidy CSV per snapshot.

Generated, not downloaded: the README's "From published scores only" example and its tests
build their collection from these files alone — no documents, no runs, no qrels.
"""

from __future__ import annotations

import random
from pathlib import Path

SNAPSHOTS = ("2022-06", "2022-07", "2022-09")
SYSTEMS = ("bm25", "d2q", "colbert", "monot5", "splade")
# Topics per snapshot: most persist, a few are new or gone (LongEval-like churn).
TOPICS = {
    "2022-06": [f"q{i:02d}" for i in range(1, 13)],
    "2022-07": [f"q{i:02d}" for i in range(1, 13) if i != 4] + ["q13", "q14"],
    "2022-09": [f"q{i:02d}" for i in range(2, 13)] + ["q13", "q15"],
}
MEASURES = {"map": "AP", "ndcg_cut_10": "nDCG@10", "P_10": "P@10"}
STRENGTH = {"bm25": 0.30, "d2q": 0.36, "colbert": 0.42, "monot5": 0.47, "splade": 0.44}


def scores(seed: int = 33) -> dict[tuple[str, str], dict[str, dict[str, float]]]:
    """(snapshot, system) → trec_eval measure → topic → value, four decimals as trec_eval
    prints them; a system leaves one topic per snapshot unanswered (no row, as `trec_eval -q`
    without -c)."""
    rng = random.Random(seed)
    out: dict[tuple[str, str], dict[str, dict[str, float]]] = {}
    for k, label in enumerate(SNAPSHOTS):
        for j, system in enumerate(SYSTEMS):
            topics = TOPICS[label]
            skipped = topics[(j + k) % len(topics)] if system != "bm25" else None
            by_measure: dict[str, dict[str, float]] = {}
            for name in MEASURES:
                by_measure[name] = {
                    t: round(min(1.0, max(0.0, rng.gauss(STRENGTH[system] - 0.03 * k, 0.15))),
                             4)
                    for t in topics if t != skipped}
            out[(label, system)] = by_measure
    return out


def write_trec_eval(folder: Path, seed: int = 33) -> dict[tuple[str, str], Path]:
    """One `trec_eval -q` file per snapshot and system (runid line, per-topic rows, `all`)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for (label, system), by_measure in scores(seed).items():
        lines = [f"runid                 \tall\t{system}"]
        for name, values in by_measure.items():
            lines += [f"{name:<22}\t{t}\t{v:.4f}" for t, v in values.items()]
            lines.append(f"{name:<22}\tall\t{sum(values.values()) / len(values):.4f}")
        path = folder / f"{label}.{system}.score"
        path.write_text("\n".join(lines) + "\n")
        paths[(label, system)] = path
    return paths


def write_tidy(folder: Path, seed: int = 33) -> dict[str, Path]:
    """One tidy CSV per snapshot: `run,topic,measure,value`, ir_measures names."""
    folder.mkdir(parents=True, exist_ok=True)
    rows: dict[str, list[str]] = {label: ["run,topic,measure,value"] for label in SNAPSHOTS}
    for (label, system), by_measure in scores(seed).items():
        for name, values in by_measure.items():
            rows[label] += [f"{system},{t},{MEASURES[name]},{v:.4f}" for t, v in values.items()]
    paths = {}
    for label, lines in rows.items():
        paths[label] = folder / f"{label}.csv"
        paths[label].write_text("\n".join(lines) + "\n")
    return paths
