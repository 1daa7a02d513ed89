"""Check `tcdb report judge-agreement` on TREC RAG 2025's published judgments against the
reference packages, the files read without tcdb (issue 44).

    python tools/check_rag25_agreement.py FOLDER

FOLDER holds anserini-tools' `qrels.rag25.test.txt` (NIST) and `qrels.rag25.test-umbrela2.txt`
(UMBRELA): the same (topic, document) pairs, grades 0–4. The files are not shipped with tcdb;
the test suite checks the same equalities on generated files of the same format
(tests/test_judge_agreement.py). This script imports both into a throw-away SQLite database
(the documents are the ids the files name), runs the report through `tcdb.api`, and prints each
figure beside sklearn's Cohen's κ, the krippendorff package's α and a count made with `csv`.
It exits 1 when one differs by more than 1e-12.
"""

from __future__ import annotations

import csv
import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

NIST, UMBRELA = "qrels.rag25.test.txt", "qrels.rag25.test-umbrela2.txt"


def grades(path: Path) -> dict[tuple[str, str], int]:
    """(topic, document) → grade, read with the csv module."""
    with path.open(newline="", encoding="utf-8") as handle:
        return {(row[0], row[2]): int(row[3]) for row in csv.reader(handle, delimiter=" ")}


def tcdb_figures(folder: Path, work: Path) -> dict:
    """The report's JSON, from a fresh database holding both sets with their judges."""
    os.environ["TCDB_DATABASE_URL"] = f"sqlite:///{work / 'rag25.sqlite'}"
    from tcdb import api
    from tcdb.storage import migrate

    migrate.upgrade(os.environ["TCDB_DATABASE_URL"])
    judged = {**grades(folder / NIST), **grades(folder / UMBRELA)}
    docs = work / "docs.jsonl"
    docs.write_text("".join(json.dumps({"_id": d, "text": d}) + "\n"
                            for d in sorted({d for _, d in judged})), encoding="utf-8")
    topics = work / "topics.tsv"
    topics.write_text("".join(f"{t}\ttopic {t}\n" for t in sorted({t for t, _ in judged})),
                      encoding="utf-8")
    api.collection_add("rag25", grades="0:4")
    api.snapshot_ingest("rag25", "2025", docs=docs, topics_file=topics)
    for name, file, kind in (("nist", NIST, "human"), ("umbrela", UMBRELA, "llm")):
        api.qrels_import("rag25", "2025", name, folder / file, judge_kind=kind)
    return api.judge_agreement("rag25", "2025", qrels="nist", vs="umbrela",
                               bootstrap=200).to_data()


def main(folder: Path) -> int:
    import krippendorff
    import numpy as np
    from sklearn.metrics import cohen_kappa_score

    a, b = grades(folder / NIST), grades(folder / UMBRELA)
    both = sorted(set(a) & set(b))
    x, y = [a[k] for k in both], [b[k] for k in both]
    with tempfile.TemporaryDirectory() as work:
        got = tcdb_figures(folder, Path(work))
    print(f"pairs judged by both: csv {len(both):,}, tcdb {got['n_pairs']:,}; "
          f"topics {len({t for t, _ in both})}")
    reference = {
        "kappa": cohen_kappa_score(x, y),
        "kappa_linear": cohen_kappa_score(x, y, weights="linear"),
        "kappa_quadratic": cohen_kappa_score(x, y, weights="quadratic"),
        "alpha_ordinal": krippendorff.alpha(reliability_data=np.array([x, y]),
                                            level_of_measurement="ordinal"),
        "alpha_nominal": krippendorff.alpha(reliability_data=np.array([x, y]),
                                            level_of_measurement="nominal"),
    }
    worst = 0.0
    for key, want in reference.items():
        mine = got["agreement"][key]
        worst = max(worst, abs(mine - want))
        print(f"{key:16} tcdb {mine:.12f}   reference {want:.12f}   |Δ| {abs(mine - want):.1e}")
    count = Counter((a[k], b[k]) for k in both)
    matrix = [[count[(g, h)] for h in got["labels"]] for g in got["labels"]]
    same = matrix == got["confusion"]
    print(f"confusion matrix equal to the csv count: {same}")
    for row in got["per_topic"]:
        keys = [k for k in both if k[0] == str(row["topic"])]
        xs, ys = [a[k] for k in keys], [b[k] for k in keys]
        for weights, key in ((None, "kappa"), ("linear", "kappa_linear"),
                             ("quadratic", "kappa_quadratic")):
            worst = max(worst, abs(row[key] - cohen_kappa_score(xs, ys, weights=weights)))
    print(f"largest |Δ| over the overall figures and per-topic κ: {worst:.1e}")
    return 0 if same and worst <= 1e-12 and got["n_pairs"] == len(both) else 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1])))
