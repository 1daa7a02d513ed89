"""`tcdb report subset`: a run's mean over a topic subset against the percentile bootstrap
interval of its full-topic mean at the subset's size — planted per-topic scores whose subset
mean certainly falls outside (and certainly inside), and the interval equal to numpy's own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.builders import build_snapshot

C = "lit"
T = 20
TOPICS = {str(t): f"query {t}" for t in range(1, T + 1)}
DOCS = {f"d{t}": f"text {t}" for t in range(1, T + 1)}
QRELS = [(str(t), f"d{t}", 1) for t in range(1, T + 1)]
# per-topic AP (topic 1 … 20): the model has seen topics 1–10 and does well exactly there
PLANTED = {
    "seen": [0.9] * 10 + [0.1] * 10,      # full 0.5; on the clean topics 11–20: 0.1
    "steady": [0.4, 0.6] * 10,            # full 0.5; on 11–20: 0.5 as well
    "unlucky": [0.1] * 10 + [0.9] * 10,   # full 0.5; on 11–20: 0.9
}


@pytest.fixture
def planted(db: str, tmp_path: Path) -> Path:
    """Three runs with published per-topic AP (`tcdb scores import`), a run with only P@10,
    and the contamination set `clean-gpt` (topics 11–20) for model `gpt`."""
    from tcdb import api
    from tcdb.api import scores_import

    build_snapshot(tmp_path, C, "v1", DOCS, TOPICS, QRELS)
    for run, values in PLANTED.items():
        path = tmp_path / f"{run}.tsv"
        path.write_text("".join(f"{t}\tAP\t{v}\n" for t, v in enumerate(values, start=1)))
        scores_import(C, "v1", path, qrels="original", run=run)
    other = tmp_path / "other.tsv"
    other.write_text("1\tP@10\t0.1\n")
    scores_import(C, "v1", other, qrels="original", run="other")
    quiz = tmp_path / "quiz.tsv"
    quiz.write_text("model\ttopic\tscore\n" + "".join(
        f"gpt\t{t}\t{0.9 if t <= 10 else 0.1}\n" for t in range(1, T + 1)))
    api.topic_set_import(C, "v1", quiz, threshold=0.5, prefix="clean")
    return tmp_path


def direct_interval(values: list[float], size: int, n_samples: int, seed: int
                    ) -> tuple[float, float]:
    """The interval computed plainly: draw the index matrix, take row means, percentiles."""
    rng = np.random.default_rng(seed)
    index = rng.integers(0, len(values), size=(n_samples, size))
    means = np.asarray(values)[index].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def test_planted_subsets_fall_outside_and_inside(planted: Path, cli: Any) -> None:
    code, out, err = cli("report", "subset", C, "v1", "--topics", "clean-gpt", "-m", "AP",
                         "--json")
    assert code == 0, err
    report = json.loads(out)
    assert (report["n_topics"], report["n_subset"]) == (20, 10)
    assert report["for_model"] == "gpt" and report["method"] == "contamination-quiz"
    assert (report["n_samples"], report["seed"]) == (10_000, 0)
    runs = {r["run"]: r for r in report["runs"]}
    assert set(runs) == set(PLANTED)
    assert report["skipped"] == ["other"]
    for run in runs.values():
        assert run["mean"] == pytest.approx(0.5)
    # resampled means of 10 topics are 0.1 + 0.08 k, k ~ Binomial(10, ½): P(k ≤ 1) ≈ 1 %,
    # so the interval starts at k ≥ 2 (0.26) — a mean of 0.1 lies below it whatever the seed
    assert runs["seen"]["subset_mean"] == pytest.approx(0.1)
    assert runs["seen"]["position"] == "below" and runs["seen"]["ci_low"] > 0.2
    assert runs["seen"]["delta"] == pytest.approx(-0.4)
    assert runs["unlucky"]["position"] == "above"
    # 0.4/0.6 topics: half of each in the subset, so its mean is the full mean itself
    assert runs["steady"]["subset_mean"] == pytest.approx(0.5)
    assert runs["steady"]["position"] == "inside"
    assert runs["steady"]["ci_low"] < 0.5 < runs["steady"]["ci_high"]
    assert report["counts"] == {"below": 1, "inside": 1, "above": 1}
    code, out, err = cli("report", "subset", C, "v1", "--topics", "clean-gpt", "-m", "AP")
    assert code == 0, err
    assert "derived for gpt" in out and "10 of 20 topics" in out and "below" in out
    assert "skipped (no AP scores): other" in out


def test_interval_equals_a_direct_numpy_computation(planted: Path) -> None:
    from tcdb import api

    for seed, n in ((0, 10_000), (7, 2_000)):
        result = api.subset_ci(C, "v1", topics="clean-gpt", runs=["seen", "steady"],
                               measure="AP", bootstrap=n, seed=seed)
        frame = result.to_frame()
        assert list(frame["run"]) == ["seen", "steady"]
        assert result.n_subset == 10 and result.for_model == "gpt"
        for run, low, high in frame[["run", "ci_low", "ci_high"]].itertuples(index=False):
            want = direct_interval(PLANTED[run], 10, n, seed)
            assert (low, high) == pytest.approx(want, abs=1e-9)


def test_pure_function_matches_per_run_numpy() -> None:
    """100 runs × 50 topics × 10,000 resamples at once equal each run's plain computation."""
    from tcdb.analysis.subset import subset_intervals

    rng = np.random.default_rng(1)
    scores = rng.random((100, 50)).round(4)
    subset = np.arange(0, 50, 3)  # 17 topics
    rows = subset_intervals(scores, subset, 10_000, seed=5)
    for i in (0, 41, 99):
        want = direct_interval(scores[i].tolist(), subset.size, 10_000, 5)
        assert (rows[i]["ci_low"], rows[i]["ci_high"]) == pytest.approx(want, abs=1e-9)
        assert rows[i]["mean"] == pytest.approx(scores[i].mean(), abs=1e-12)
        assert rows[i]["subset_mean"] == pytest.approx(scores[i, subset].mean(), abs=1e-12)
    with pytest.raises(ValueError, match="subset has no topics"):
        subset_intervals(scores, np.array([], dtype=int))


def test_unanswered_topics_count_zero_and_options(planted: Path, cli: Any) -> None:
    """A run that answered only some topics: full and subset means over every judged topic."""
    from tcdb import api
    from tcdb.api import scores_import

    partial = planted / "partial.tsv"
    partial.write_text("1\tAP\t1.0\n12\tAP\t0.5\n")  # 18 judged topics unanswered
    scores_import(C, "v1", partial, qrels="original", run="partial")
    api.topic_set_create(collection=C, name="pair", snapshot="v1", topic_ids=["12", "13"])
    code, out, err = cli("report", "subset", C, "v1", "--topics", "pair", "-m", "AP",
                         "--run", "partial", "--samples", "500", "--seed", "3", "--json")
    assert code == 0, err
    (row,) = json.loads(out)["runs"]
    assert row["mean"] == pytest.approx(1.5 / 20) and row["subset_mean"] == pytest.approx(0.25)
    values = [1.0 if t == 1 else 0.5 if t == 12 else 0.0 for t in range(1, T + 1)]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(
        direct_interval(values, 2, 500, 3), abs=1e-9)
    code, _, err = cli("report", "subset", C, "v1", "--topics", "pair", "--samples", "0")
    assert code == 1 and "--samples" in err
    code, _, err = cli("report", "subset", C, "v1", "--topics", "pair", "--run", "ghost")
    assert code == 1 and "no run 'ghost'" in err
    code, _, err = cli("report", "subset", C, "v1", "--topics", "nope")
    assert code == 1 and "no topic set 'nope' in 'lit' (known: clean-gpt, pair)" in err
