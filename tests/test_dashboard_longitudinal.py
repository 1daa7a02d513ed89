"""The dashboard's longitudinal figures equal the reports they are built on: the drift page's
length-direction churn and judgments by grade (`tcdb snapshot stats`), the persistence page's
per-topic change of one system between the first and last snapshot (`tcdb report
topic-deltas`). On the seeded collection of `tests.builders`, both databases."""

from __future__ import annotations

import pytest

from tests.builders import COLLECTION, Seeded
from tests.dashboard_pages import chart_with, open_page


@pytest.fixture
def seeded(seeded_url: tuple[str, Seeded], monkeypatch: pytest.MonkeyPatch) -> Seeded:
    import streamlit as st

    url, info = seeded_url
    monkeypatch.setenv("TCDB_DATABASE_URL", url)
    st.cache_data.clear()
    return info


def test_drift_shows_length_churn_and_judgments_by_grade(seeded: Seeded) -> None:
    from tcdb.api import qrels, snapshot_stats

    at = open_page("drift", collection=COLLECTION)
    churn = chart_with(at, "transition", "direction", "changed documents")
    report = snapshot_stats(COLLECTION)
    expected = {(f"{c.a} → {c.b}", d.replace("_", " ")): getattr(c, d) for c in report.churn
                for d in ("grew", "shrank", "same_length")}
    assert {(r.transition, r.direction): r._3 for r in churn.itertuples()} == expected
    # the seeded collection rewrites one document per transition: churn's `changed`
    assert {t: sum(n for (t2, _), n in expected.items() if t2 == t)
            for t in seeded.churn} == {t: c["changed"] for t, c in seeded.churn.items()}
    grades = chart_with(at, "snapshot", "grade", "judgments")
    for label in seeded.labels:
        judged = qrels(COLLECTION, label, "original").to_frame()["grade"].value_counts()
        shown = grades[grades["snapshot"] == label]
        assert dict(zip(shown["grade"].astype(int), shown["judgments"], strict=True)) == \
            {int(g): int(n) for g, n in judged.items()}


def test_persistence_page_shows_one_systems_change_between_first_and_last(seeded: Seeded
                                                                          ) -> None:
    from tcdb.api import topic_deltas

    system = seeded.systems[1]
    at = open_page("persistence", collection=COLLECTION, pivot="bm25", measure="AP",
                   system=system)
    change = chart_with(at, "topic", "delta", "pivot_delta")
    report = topic_deltas(COLLECTION, system=system,
                          snapshots=[seeded.labels[0], seeded.labels[-1]], measure="AP",
                          pivot="bm25", compute=False)
    assert change["delta"].tolist() == [r.delta for r in report.topics]
    assert change["pivot_delta"].tolist() == [r.pivot_delta for r in report.topics]
    assert len(change) == report.n_topics > 0
