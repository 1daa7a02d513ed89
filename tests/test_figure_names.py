"""Every figure names itself: measure names in any case, one `qrels`/`topics` field for every
report, and each p-value's test in words (issue 31, item 4)."""

from __future__ import annotations

from typing import Any

import pytest

from tcdb.errors import FieldError
from tcdb.reports.fields import QRELS_DEFAULT, QRELS_HELP, TOPICS_HELP
from tcdb.scoring import measures
from tcdb.scoring.measures import canonical_measure


@pytest.mark.parametrize(("written", "canonical"), [
    ("ndcg@10", "nDCG@10"), ("NDCG@10", "nDCG@10"), ("nDCG@10", "nDCG@10"),
    ("ndcg_cut_10", "nDCG@10"), ("map", "AP"), ("MAP", "AP"), ("p@10", "P@10"),
    ("P_10", "P@10"), ("recip_rank", "RR"), ("RECIP_RANK", "RR"), ("mrr@10", "RR@10"),
    ("judged@10", "Judged@10"), ("bpref", "Bpref"), (" AP ", "AP")])
def test_measure_names_in_any_case(written: str, canonical: str) -> None:
    assert canonical_measure(written) == canonical


def test_an_unknown_measure_is_refused_naming_the_field() -> None:
    with pytest.raises(FieldError, match=r"^measure: 'ndgc@10' is not a measure"):
        canonical_measure("ndgc@10", "measure")


def test_an_ambiguous_case_is_refused_naming_the_field(monkeypatch: pytest.MonkeyPatch) -> None:
    """No two ir_measures measures differ only in case today; the rule is tested on two that
    would (the folded spellings `Xyz@10` and `XYZ@10` parsing to different measures)."""
    meanings = {"Xyz@10": "Xyz@10", "XYZ@10": "XYZ@10"}
    monkeypatch.setattr(measures, "_parsed", meanings.get)
    monkeypatch.setattr(measures, "_case_variants", lambda text: list(meanings))
    with pytest.raises(FieldError, match=r"^measures: 'xyz@10' is ambiguous.*XYZ@10 or Xyz@10"):
        canonical_measure("xyz@10")


def test_literature_import_reads_measure_names_by_the_same_rule() -> None:
    from tcdb.collections.results_tables.literature import normalise_metric

    for name in ["ndcg@10", "NDCG@10", "map", "p@10", "P_10", "recip_rank"]:
        assert normalise_metric(name) == canonical_measure(name)
    assert normalise_metric("Success@5 (dev)") == "Success@5 (dev)"


# Fields named qrels/topics that are not "the set a report scores on / averages over": why each.
_QRELS_OTHERWISE = {
    "snapshot_ingest": "the name the ingested set is stored under",
    "scores_import": "the set imported scores were computed on: no default can know it",
    "assessor_agreement": "the first assessor's set: the pool's pooled set by default",
}
_TOPICS_OTHERWISE = {
    "subset_ci": "the subset itself, required",
    "per_topic_scores": "a topic set's members across snapshots",
}


def _options(name: str) -> list[tuple[str, Any]]:
    from tcdb.operations import all_operations

    found = []
    for op in all_operations().values():
        field = op.request.model_fields.get(name)
        if field is not None and (field.json_schema_extra or {}).get("cli") == "option":
            found.append((op.name, field))
    return found


def test_every_qrels_option_defaults_to_original() -> None:
    checked = [(op, f) for op, f in _options("qrels") if op not in _QRELS_OTHERWISE]
    assert len(checked) >= 12
    for op, field in checked:
        assert field.default in (QRELS_DEFAULT, [QRELS_DEFAULT]), op
        assert (field.description or "").startswith("Qrels set name"), op
        if field.default == QRELS_DEFAULT:
            assert field.description == QRELS_HELP, op
    assert {"reusability", "leave_out", "compare", "persistence"} <= {op for op, _ in checked}


def test_every_topics_option_takes_core_with_the_same_help() -> None:
    from pydantic import TypeAdapter

    checked = [(op, f) for op, f in _options("topics") if op not in _TOPICS_OTHERWISE]
    assert len(checked) >= 11
    for op, field in checked:
        assert field.description == TOPICS_HELP, op
        assert field.default in ("all", None), op
        adapter: TypeAdapter[Any] = TypeAdapter(field.rebuild_annotation())
        for word in ("all", "core"):
            # "all"/"core" kept for the persistence resolver, or None: every judged topic
            assert adapter.validate_python(word) in (word, None), (op, word)
        assert adapter.validate_python("my-set") == "my-set", op


def test_persistence_and_compare_name_their_tests() -> None:
    from tcdb.vocabulary import CORRECTIONS, PERSISTENCE_FIGURES, persistence_tests

    assert "unpaired t-test" in persistence_tests(False)["p_value"]
    assert "equal variances" in persistence_tests(False)["p_value"]
    assert "paired t-test" in persistence_tests(True)["p_value_paired"]
    assert set(persistence_tests(True)) <= set(PERSISTENCE_FIGURES)
    assert "false discovery rate" in CORRECTIONS["bh"]
