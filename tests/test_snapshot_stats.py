"""`tcdb snapshot stats` on SQLite and PostgreSQL, on the generated three-snapshot collection
of `tests.longitudinal` whose texts, churn and judgments are known by construction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tcdb.errors import OptionError
from tests.longitudinal import COLLECTION, DEPTH, LABELS, Web, build_web


@pytest.fixture
def web(db: str, tmp_path: Path) -> Web:
    return build_web(tmp_path)


def test_stats_equal_what_was_written(web: Web) -> None:
    from tcdb.ingest.versions import normalise_text
    from tcdb.reports.snapshot_stats import snapshot_stats

    report = snapshot_stats(COLLECTION)
    assert report["snapshots"] == LABELS
    assert report["present_in_all"] == 30  # pages 010…039, renamed in every snapshot
    for stats, label in zip(report["per_snapshot"], LABELS, strict=True):
        tokens = [len(t.split()) for t in web.texts[label].values()]
        assert stats["documents"] == 40 and stats["queries"] == len(web.topics[label])
        assert stats["tokens"] == {"n_with_text": 40, "mean": pytest.approx(sum(tokens) / 40),
                                   "min": min(tokens), "max": max(tokens)}
        by_grade: dict[int, int] = {}
        for _, _, grade in web.qrels[label]:
            by_grade[grade] = by_grade.get(grade, 0) + 1
        assert stats["judgments_by_grade"] == dict(sorted(by_grade.items()))
        relevant = {t for t, _, g in web.qrels[label] if g > 0}
        assert stats["topics_without_relevant"] == sorted(set(web.topics[label]) - relevant,
                                                          key=int)
        assert [p["relevant"] for p in stats["per_topic"]] == [
            sum(1 for t2, _, g in web.qrels[label] if t2 == t and g > 0)
            for t in sorted(web.topics[label], key=int)]
        assert all(not r["empty"] and not r["short"] for r in stats["runs"])
    for churn, (a, b) in zip(report["churn"], zip(LABELS, LABELS[1:], strict=False),
                             strict=True):
        kept = set(web.texts[a]) & set(web.texts[b])
        lengths = {s: {u: len(normalise_text(web.texts[s][u])) for u in kept} for s in (a, b)}
        changed = {u for u in kept if normalise_text(web.texts[a][u])
                   != normalise_text(web.texts[b][u])}
        assert churn == {
            "a": a, "b": b, "added": 5, "removed": 5, "changed": len(changed),
            "unchanged": len(kept) - len(changed),
            "grew": sum(1 for u in changed if lengths[b][u] > lengths[a][u]),
            "shrank": sum(1 for u in changed if lengths[b][u] < lengths[a][u]),
            "same_length": sum(1 for u in changed if lengths[b][u] == lengths[a][u])}
        assert min(churn["grew"], churn["shrank"], churn["same_length"]) >= 3  # …7, …3, …5


def test_short_rankings_and_chosen_snapshots(web: Web, cli) -> None:
    from tcdb.reports.snapshot_stats import snapshot_stats

    report = snapshot_stats(COLLECTION, ["s1", "s2"], short=DEPTH - 4)
    assert report["present_in_all"] == 35 and len(report["churn"]) == 1
    runs = {r["run"]: r for r in report["per_snapshot"][1]["runs"]}
    assert runs["short-s2"]["short"] == sorted(web.topics["s2"], key=int)  # 15 < 16 documents
    assert runs["steady-s2"]["short"] == [] and runs["short-s2"]["empty"] == []
    quick = snapshot_stats(COLLECTION, ["s1"], tokens=False)["per_snapshot"][0]
    assert quick["documents"] == 40 and quick["tokens"] == {
        "n_with_text": None, "mean": None, "min": None, "max": None}
    with pytest.raises(OptionError, match="--short"):
        snapshot_stats(COLLECTION, short=0)
    code, out, err = cli("snapshot", "stats", COLLECTION, "s1", "s3", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["present_in_all"] == 30 and data["churn"][0]["a"] == "s1"
    code, out, err = cli("snapshot", "stats", COLLECTION, "--short", "16", "--no-tokens")
    assert code == 0, err
    assert "30 documents in all 3 snapshots" in out and "grew" in out and "short-s2" in out
