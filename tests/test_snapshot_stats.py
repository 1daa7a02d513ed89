"""`tcdb snapshot stats` on SQLite and PostgreSQL, on the generated three-snapshot collection
of `tests.longitudinal` whose texts, churn and judgments are known by construction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tcdb.errors import FieldError
from tests.longitudinal import COLLECTION, DEPTH, LABELS, Web, build_web


@pytest.fixture
def web(db: str, tmp_path: Path) -> Web:
    return build_web(tmp_path)


def test_stats_equal_what_was_written(web: Web) -> None:
    from tcdb.api import snapshot_stats

    report = snapshot_stats(COLLECTION)
    assert report.snapshots == LABELS
    assert report.present_in_all == 30  # pages 010…039, renamed in every snapshot
    for stats, label in zip(report.per_snapshot, LABELS, strict=True):
        tokens = [len(t.split()) for t in web.texts[label].values()]
        assert stats.documents == 40 and stats.queries == len(web.topics[label])
        assert stats.tokens.model_dump() == {
            "n_with_text": 40, "mean": pytest.approx(sum(tokens) / 40), "min": min(tokens),
            "max": max(tokens)}
        by_grade: dict[int, int] = {}
        for _, _, grade in web.qrels[label]:
            by_grade[grade] = by_grade.get(grade, 0) + 1
        assert stats.judgments_by_grade == dict(sorted(by_grade.items()))
        relevant = {t for t, _, g in web.qrels[label] if g > 0}
        assert stats.topics_without_relevant == sorted(set(web.topics[label]) - relevant,
                                                          key=int)
        assert [p.relevant for p in stats.per_topic] == [
            sum(1 for t2, _, g in web.qrels[label] if t2 == t and g > 0)
            for t in sorted(web.topics[label], key=int)]
        assert all(not r.empty and not r.short for r in stats.runs)
    # The churn by hand, from `tests.longitudinal`'s construction (no code under test):
    # s1 holds pages 000–039, s2 005–044, s3 010–049, so each step removes 5, adds 5 and keeps
    # 35. Of the kept pages those ending in 7 grow a word, in 3 lose one, in 5 change a word at
    # the same length; the others (…1 with its double spaces too) keep their text.
    #   s1→s2 keeps 005–039: …7 = 007 017 027 037 (4), …3 = 013 023 033 (3),
    #         …5 = 005 015 025 035 (4): 11 changed, 35 − 11 = 24 unchanged
    #   s2→s3 keeps 010–044: …7 = 017 027 037 (3), …3 = 013 023 033 043 (4),
    #         …5 = 015 025 035 (3): 10 changed, 35 − 10 = 25 unchanged
    by_hand = {("s1", "s2"): {"changed": 11, "unchanged": 24, "grew": 4, "shrank": 3,
                              "same_length": 4},
               ("s2", "s3"): {"changed": 10, "unchanged": 25, "grew": 3, "shrank": 4,
                              "same_length": 3}}

    def normalised(text: str) -> str:  # the DESIGN's normalisation, written out: the texts
        assert text.isascii()  # are ASCII, so NFC changes nothing; collapse runs, strip ends
        return " ".join(text.split())

    for churn, (a, b) in zip(report.churn, zip(LABELS, LABELS[1:], strict=False),
                             strict=True):
        assert churn.model_dump() == {"a": a, "b": b, "added": 5, "removed": 5, **by_hand[(a, b)]}
        assert min(churn.grew, churn.shrank, churn.same_length) >= 3  # …7, …3, …5
        # the figures by hand describe the texts written
        kept = set(web.texts[a]) & set(web.texts[b])
        assert len(kept) == 35 and len(set(web.texts[b]) - kept) == 5
        before = {u: normalised(web.texts[a][u]) for u in kept}
        after = {u: normalised(web.texts[b][u]) for u in kept}
        changed = {u for u in kept if before[u] != after[u]}
        assert {u[-1] for u in changed} == {"3", "5", "7"}
        assert by_hand[(a, b)] == {
            "changed": len(changed), "unchanged": len(kept) - len(changed),
            "grew": sum(len(after[u]) > len(before[u]) for u in changed),
            "shrank": sum(len(after[u]) < len(before[u]) for u in changed),
            "same_length": sum(len(after[u]) == len(before[u]) for u in changed)}


def test_short_rankings_and_chosen_snapshots(web: Web, cli) -> None:
    from tcdb.api import snapshot_stats

    report = snapshot_stats(COLLECTION, ["s1", "s2"], short=DEPTH - 4)
    assert report.present_in_all == 35 and len(report.churn) == 1
    runs = {r.run: r for r in report.per_snapshot[1].runs}
    assert runs["short-s2"].short == sorted(web.topics["s2"], key=int)  # 15 < 16 documents
    assert runs["steady-s2"].short == [] and runs["short-s2"].empty == []
    quick = snapshot_stats(COLLECTION, ["s1"], tokens=False).per_snapshot[0]
    assert quick.documents == 40 and quick.tokens.model_dump() == {
        "n_with_text": None, "mean": None, "min": None, "max": None}
    with pytest.raises(FieldError, match="^short: "):
        snapshot_stats(COLLECTION, short=0)
    code, out, err = cli("snapshot", "stats", COLLECTION, "s1", "s3", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["present_in_all"] == 30 and data["churn"][0]["a"] == "s1"
    code, out, err = cli("snapshot", "stats", COLLECTION, "--short", "16", "--no-tokens")
    assert code == 0, err
    assert "30 documents in all 3 snapshots" in out and "grew" in out and "short-s2" in out
