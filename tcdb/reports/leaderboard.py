"""Was each new state of the art on this snapshot a significant improvement? The leaderboard over
time (`tcdb report leaderboard`).

The runs' per-topic scores (one measure, one qrels set, every judged topic ∩ an optional topic
set; `tcdb.reports.run_scores`) and their `submitted` dates go to
`tcdb.analysis.leaderboard.sota_chain`. Every run needs a date: a run without one is named in
the error (give the dated runs with `--run`, or date it with `tcdb run update … --date`).

The report is a dict::

    {collection, snapshot, qrels, measure, test, alpha, correction, topic_set, n_topics,
     permutations, seed, chain: [run…], n_steps, n_significant,
     runs: [sota_chain row + system]}
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict

from tcdb.errors import OptionError
from tcdb.vocabulary import Correction, PairedTest, one_of


class LeaderboardReport(TypedDict):
    """`tcdb report leaderboard`: runs by submission date, the SOTA chain and its steps."""

    collection: str
    snapshot: str
    qrels: str
    measure: str
    test: str
    alpha: float
    correction: str
    topic_set: str | None
    n_topics: int
    permutations: int
    seed: int
    chain: list[str]
    n_steps: int  # new SOTAs after the first
    n_significant: int  # of those, significant vs the previous SOTA
    runs: list[dict[str, Any]]


def leaderboard_report(
    collection: str,
    snapshot: str,
    measure: str,
    qrels: str = "original",
    test: PairedTest | str = PairedTest.t,
    alpha: float = 0.05,
    correction: Correction | str = Correction.holm,
    *,
    topics: str | None = None,
    runs: Sequence[str] | None = None,
    permutations: int = 10_000,
    seed: int = 0,
    compute: bool = True,
) -> LeaderboardReport:
    """The SOTA chain of the snapshot's runs (or `runs`) in submission order, each step tested.

    Why: a leaderboard crowns whoever tops the mean; whether the new entry is significantly
    better than the state of the art it replaced is the question a reader has.
    """
    from tcdb.analysis.leaderboard import sota_chain
    from tcdb.reports.run_scores import load_run_scores

    test = one_of(PairedTest, test, "--test", "unknown test {value!r}; use {choices}")
    correction = one_of(Correction, correction, "--correction",
                        "unknown correction {value!r}; use {choices}")
    if not 0 < alpha < 1:
        raise OptionError("--alpha", f"the significance level must be between 0 and 1, not "
                          f"{alpha}")
    if permutations < 1 and test == PairedTest.permutation:
        raise OptionError("--permutations", "the randomisation test needs at least one "
                          "resample")
    data = load_run_scores(collection, snapshot, qrels, runs, measure, compute=compute,
                           topics=topics)
    if data.wide.shape[1] == 0:
        raise OptionError("--run", f"snapshot {snapshot!r} has no runs")
    undated = [tag for tag, date in data.submitted.items() if date is None]
    if undated:
        raise OptionError("--run", f"run(s) without a submitted date: {', '.join(undated)} "
                          "(date them with `tcdb run update COLLECTION SNAPSHOT TAG --date "
                          "YYYY-MM-DD`, or give the dated runs with --run)")
    rows = sota_chain(data.wide, data.submitted, test, alpha, correction,
                      permutations=permutations, seed=seed)
    for row in rows:
        row["system"] = data.systems[row["run"]]
    steps = [r for r in rows if r["previous_sota"] is not None]
    return {
        "collection": collection, "snapshot": snapshot, "qrels": qrels,
        "measure": data.measure, "test": test.value, "alpha": alpha,
        "correction": correction.value, "topic_set": topics, "n_topics": len(data.wide),
        "permutations": permutations, "seed": seed,
        "chain": [r["run"] for r in rows if r["is_sota"]],
        "n_steps": len(steps), "n_significant": sum(bool(r["significant"]) for r in steps),
        "runs": rows,
    }
