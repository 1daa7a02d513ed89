"""Who judged a qrels set (issue 44, Build 1): the judge kind, an LLM's provenance from a sidecar
or from UMBRELA's output, and answers that did not parse — stored, counted, never graded 0.

Both databases. The expected scores come from ir_measures on qrels files the test writes
itself; the prompt hash from hashlib on the template's text.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

import pytest
from sqlmodel import select

from tcdb.collections.qrels.provenance import umbrela_provenance
from tcdb.errors import InputError
from tcdb.operations import Database
from tests.builders import build_snapshot, write_qrels_file, write_run_file

C = "rag"
DOCS = {f"d{i}": f"passage {i}" for i in range(1, 7)}
TOPICS = {"1": "flea life cycle", "2": "tides"}
HUMAN = [("1", "d1", 3), ("1", "d2", 0), ("2", "d4", 2)]
TEMPLATE = ("Given a query and a passage, you must provide a score on an integer scale of 0 "
            "to 3 …\nQuery: {query}\nPassage: {passage}\n##final score:")


@pytest.fixture
def snap(db: str, tmp_path: Path) -> Path:
    build_snapshot(tmp_path, C, "s1", DOCS, TOPICS, HUMAN)
    return tmp_path


def _sidecar(folder: Path, text: str, name: str = "llm.provenance.yaml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


SIDECAR = f"""\
judge_kind: llm
model: gpt-4o
model_revision: gpt-4o-2024-08-06
provider: openai
prompt_template: {json.dumps(TEMPLATE)}
prompt_variant: bing-zeroshot
few_shot_examples:
  - "Query: a\\nPassage: b\\n##final score: 2"
decoding:
  temperature: 0
  top_p: 1.0
  frequency_penalty: 0.5
  presence_penalty: 0
  seed: 12345678901
samples: 3
aggregation: mode
judged_at: 2025-08-01
"""


def _answers(folder: Path, records: list[dict[str, object]], name: str = "answers.jsonl"
             ) -> Path:
    path = folder / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _umbrela_record(qid: str, docid: str, prediction: str, judgment: int, status: int
                    ) -> dict[str, object]:
    """One line of UMBRELA's judge output, its fields as `prepare_judgments` writes them (no
    qid, no docid: the n-th answers the n-th candidate of the judge input)."""
    return {"model": "gpt-4o", "query": TOPICS[qid], "passage": DOCS[docid],
            "prompt": TEMPLATE, "prediction": prediction, "reasoning": None,
            "judgment": judgment, "result_status": status}


def _judge_input(folder: Path, pairs: list[tuple[str, str]]) -> Path:
    """UMBRELA's batch judge input: one line per query, its candidates with their docids."""
    by_query: dict[str, list[str]] = {}
    for qid, docid in pairs:
        by_query.setdefault(qid, []).append(docid)
    return _answers(folder, [{"query": {"text": TOPICS[q], "qid": q},
                              "candidates": [{"docid": d, "doc": {"segment": DOCS[d]}}
                                             for d in docs]}
                             for q, docs in by_query.items()], "judge_input.jsonl")


def test_existing_sets_are_unknown_and_a_sidecar_round_trips(snap: Path) -> None:
    from tcdb import api

    assert api.qrels(C, "s1").judge_kind == "unknown"  # the ingested set: nobody said who
    qrels = write_qrels_file(snap / "llm.txt", [("1", "d1", 2), ("2", "d4", 1)])
    result = api.qrels_import(C, "s1", "llm", qrels, provenance=_sidecar(snap, SIDECAR))
    assert (result.judge_kind, result.n_unparsed) == ("llm", 0)
    shown = api.qrels(C, "s1", "llm")
    assert shown.judge_kind == "llm"
    p = shown.provenance
    assert p is not None
    assert (p.model, p.model_revision, p.provider, p.prompt_variant) == (
        "gpt-4o", "gpt-4o-2024-08-06", "openai", "bing-zeroshot")
    assert p.prompt_sha256 == hashlib.sha256(TEMPLATE.encode("utf-8")).hexdigest()
    assert (p.temperature, p.top_p, p.frequency_penalty, p.presence_penalty, p.seed) == (
        0.0, 1.0, 0.5, 0.0, 12345678901)
    assert (p.samples, p.aggregation, p.few_shot_count, p.judged_at) == (
        3, "mode", 1, dt.date(2025, 8, 1))
    from tcdb.schema import QrelsProvenance

    with Database().session() as session:
        stored = session.exec(select(QrelsProvenance)).one()
    assert stored.prompt_template == TEMPLATE
    assert stored.few_shot_examples == "Query: a\nPassage: b\n##final score: 2"


def test_a_human_set_and_the_judge_kind_filter(snap: Path) -> None:
    from tcdb import api

    api.qrels_import(C, "s1", "nist", write_qrels_file(snap / "nist.txt", HUMAN),
                     judge_kind="human")
    api.qrels_import(C, "s1", "clicks", write_qrels_file(snap / "c.txt", [("1", "d3", 1)]),
                     judge_kind="click_through_rate")
    rows = {r.name: r for r in api.qrels_sets(C).sets}
    assert {n: r.judge_kind for n, r in rows.items()} == {
        "original": "unknown", "nist": "human", "clicks": "click_through_rate"}
    assert [r.name for r in api.qrels_sets(C, judge_kind="human").sets] == ["nist"]
    assert api.qrels_sets(C, judge_kind="llm").sets == []


def test_umbrela_output_imported_with_the_provenance_its_name_holds(snap: Path) -> None:
    from tcdb import api

    folder = snap / "modified_qrels"
    folder.mkdir()
    path = folder / "rag24.test_gpt-4o_0123_0_1.txt"
    # UMBRELA's `write_modified_qrel`: `qid Q0 docid grade`, one pair a line
    path.write_text("1 Q0 d1 3\n1 Q0 d2 1\n2 Q0 d4 2\n", encoding="utf-8")
    result = api.qrels_import(C, "s1", "umbrela", path, umbrela=True)
    assert (result.judge_kind, result.n_judgments) == ("llm", 3)
    p = api.qrels(C, "s1", "umbrela").provenance
    assert p is not None
    assert (p.model, p.judged_grades, p.few_shot_count, p.samples, p.aggregation) == (
        "gpt-4o", "0123", 0, 1, None)
    lineage = api.scores(C, "s1", qrels="umbrela", measures=["P@1"]).lineage
    assert lineage is not None
    assert (lineage.qrels[0].judge_kind, lineage.qrels[0].model) == ("llm", "gpt-4o")


def test_umbrela_names_as_its_code_and_its_documentation_write_them() -> None:
    coded = umbrela_provenance("dl19-passage_gpt-4o_0123_2_3.txt")
    assert coded.values == {"model": "gpt-4o", "judged_grades": "0123", "few_shot_count": 2,
                            "samples": 3, "aggregation": "mode"}
    documented = umbrela_provenance("dl19-passage_gpt-4o_01230_1.txt")
    assert documented.values == {"model": "gpt-4o", "judged_grades": "0123",
                                 "few_shot_count": 0, "samples": 1}
    with pytest.raises(InputError) as info:
        umbrela_provenance("qrels.txt")
    assert str(info.value).startswith("qrels.txt: not an UMBRELA output file name")


def test_an_unparsed_answer_is_stored_counted_and_not_scored_as_zero(snap: Path) -> None:
    """UMBRELA writes grade 0 for an answer it could not parse (`result_status: 0`). Under
    tcdb the pair is no judgment: the scores equal ir_measures on the qrels without it, and
    differ from ir_measures on the qrels with it as 0 (a judged-only measure and bpref see
    the difference; P and nDCG treat a 0 and an unjudged document alike)."""
    import ir_measures

    from tcdb import api
    from tcdb.schema import JudgmentAnswer

    folder = snap / "modified_qrels"
    folder.mkdir()
    umbrela = [("1", "d1", 3), ("1", "d2", 0), ("1", "d3", 0), ("2", "d4", 2), ("2", "d5", 0)]
    path = folder / "rag24.test_gpt-4o_0123_0_1.txt"
    path.write_text("".join(f"{t} Q0 {d} {g}\n" for t, d, g in umbrela), encoding="utf-8")
    garbled = "I cannot decide on this passage."
    answers = _answers(snap, [
        _umbrela_record("1", "d1", "##final score: 3", 3, 1),
        _umbrela_record("1", "d2", garbled, 0, 0),  # UMBRELA's stand-in 0
        _umbrela_record("1", "d3", "##final score: 0", 0, 1),
        _umbrela_record("2", "d4", "##final score: 2", 2, 1),
        _umbrela_record("2", "d5", "##final score: 0", 0, 1),
    ])
    judge_input = _judge_input(snap, [p[:2] for p in umbrela])
    result = api.qrels_import(C, "s1", "umbrela", path, umbrela=True, answers=answers,
                              judge_input=judge_input)
    assert (result.n_judgments, result.n_unparsed) == (4, 1)
    judged = {(j.topic, j.doc): j.grade for j in api.qrels(C, "s1", "umbrela").judgments}
    assert ("1", "d2") not in judged and len(judged) == 4
    with Database().session() as session:
        kept = session.exec(select(JudgmentAnswer).where(JudgmentAnswer.doc_id == "d2")).one()
    assert (kept.answer, kept.parsed, kept.grade) == (garbled, False, None)
    assert api.qrels_sets(C, judge_kind="llm").sets[0].n_unparsed == 1

    run = write_run_file(snap / "runs", "r1", [("1", "d2", 3.0), ("1", "d1", 2.0),
                                               ("1", "d6", 1.0), ("2", "d5", 2.0),
                                               ("2", "d4", 1.0)])
    api.run_import(C, "s1", [run])
    measures = ["nDCG(judged_only=True)@10", "Bpref", "P@2"]
    table = api.scores(C, "s1", qrels="umbrela", measures=measures, per_topic=True).to_frame()
    got = {(m, t): v for m, t, v in zip(table["measure"], table["topic"], table["value"],
                                        strict=True)}

    def reference(pairs: list[tuple[str, str, int]]) -> dict[tuple[str, str], float]:
        file = write_qrels_file(snap / "ref" / f"q{len(pairs)}.txt", pairs)
        qrels = list(ir_measures.read_trec_qrels(str(file)))
        found = ir_measures.iter_calc([ir_measures.parse_measure(m) for m in measures], qrels,
                                      list(ir_measures.read_trec_run(str(run))))
        return {(str(m.measure), m.query_id): m.value for m in found}

    without = reference([p for p in umbrela if p[:2] != ("1", "d2")])
    as_zero = reference(umbrela)
    assert set(got) == set(without)
    for key, value in without.items():
        assert got[key] == pytest.approx(value, abs=1e-9), key
    assert without[("nDCG(judged_only=True)@10", "1")] != pytest.approx(
        as_zero[("nDCG(judged_only=True)@10", "1")])
    assert without[("Bpref", "1")] != pytest.approx(as_zero[("Bpref", "1")])


@pytest.mark.parametrize(("text", "line", "reason"), [
    ("judge_kind: llm\nmodle: gpt-4o\n", 2, "modle"),
    ("judge_kind: robot\n", 1, "judge_kind"),
    ("judge_kind: llm\ndecoding:\n  temperature: hot\n", 3, "temperature"),
    (f"judge_kind: llm\nprompt_template: {json.dumps(TEMPLATE)}\nprompt_sha256: abc\n", 3,
     "not the sha256"),
])
def test_a_bad_sidecar_is_refused_in_one_line_and_writes_nothing(
        snap: Path, cli, text: str, line: int, reason: str) -> None:
    from tcdb import api

    sidecar = _sidecar(snap, text)
    qrels = write_qrels_file(snap / "llm.txt", [("1", "d1", 2)])
    code, out, err = cli("qrels", "import", C, "s1", "llm", qrels, "--provenance", sidecar)
    assert code != 0 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert f"{sidecar}:{line}:" in err and reason in err, err
    assert [r.name for r in api.qrels_sets(C).sets] == ["original"]


def test_a_bad_answers_line_is_refused_in_one_line_and_writes_nothing(snap: Path, cli) -> None:
    from tcdb import api

    answers = snap / "answers.jsonl"
    answers.write_text('{"topic": "1", "doc": "d1", "parsed": true, "grade": 2}\n'
                       '{"topic": "1", "doc": "d2", "parsed": true}\n', encoding="utf-8")
    qrels = write_qrels_file(snap / "llm.txt", [("1", "d1", 2)])
    code, _, err = cli("qrels", "import", C, "s1", "llm", qrels, "--judge-kind", "llm",
                       "--answers", answers)
    assert code != 0 and len(err.strip().splitlines()) == 1, err
    assert f"{answers}:2:" in err and "a parsed answer needs its grade" in err, err
    assert [r.name for r in api.qrels_sets(C).sets] == ["original"]


def test_list_and_show_say_who_judged(snap: Path, cli) -> None:
    from tcdb import api

    qrels = write_qrels_file(snap / "llm.txt", [("1", "d1", 2), ("2", "d4", 1)])
    api.qrels_import(C, "s1", "llm", qrels, provenance=_sidecar(snap, SIDECAR))
    digest = hashlib.sha256(TEMPLATE.encode("utf-8")).hexdigest()
    code, out, _ = cli("qrels", "list", C, "--judge-kind", "llm")
    assert code == 0
    assert "gpt-4o@gpt-4o-2024-08-06" in out and digest in out and "original" not in out
    code, out, _ = cli("qrels", "show", C, "s1", "llm")
    assert code == 0
    assert f"judged by llm · model gpt-4o@gpt-4o-2024-08-06 · prompt sha256 {digest}" in out
    code, out, _ = cli("qrels", "list", C, "--json")
    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["llm"]["judge_kind"] == "llm" and rows["original"]["judge_kind"] == "unknown"


def test_pooled_and_expanded_sets_say_who_judged(snap: Path) -> None:
    """A pool's assessors' batches carry their judge kind; an expanded set takes its parents'
    when they agree, `other` when people's and unknown judgments are mixed."""
    from tcdb import api

    api.qrels_import(C, "s1", "nist", write_qrels_file(snap / "nist.txt", HUMAN),
                     judge_kind="human")
    api.run_import(C, "s1", [write_run_file(snap / "runs", "B", [("1", "d5", 1.0),
                                                                  ("2", "d6", 1.0)])])
    api.pool_build(C, "s1", "p", depth=1, all_runs=True, exclude_judged="nist")
    api.pool_import_judgments("p", write_qrels_file(snap / "b1.txt", [("1", "d5", 1)]),
                              judge_kind="human", expand="nist", expanded_name="nist+p")
    api.pool_import_judgments("p", write_qrels_file(snap / "b2.txt", [("2", "d6", 0)]),
                              judge_kind="human", expand="original",
                              expanded_name="original+p")
    kinds = {r.name: r.judge_kind for r in api.qrels_sets(C).sets}
    assert kinds == {"original": "unknown", "nist": "human", "p": "human", "nist+p": "human",
                     "original+p": "other"}


def test_answers_that_name_their_pair_and_a_judge_input_that_does_not_fit(snap: Path,
                                                                          cli) -> None:
    from tcdb import api

    qrels = write_qrels_file(snap / "llm.txt", [("1", "d1", 2), ("1", "d2", 0)])
    answers = _answers(snap, [
        {"topic": "1", "doc": "d1", "answer": "2", "parsed": True, "grade": 2,
         "input_tokens": 400, "output_tokens": 3, "cost": 0.001},
        {"qid": "1", "docid": "d2", "prediction": "?", "result_status": 0, "judgment": 0}])
    short = _judge_input(snap, [("1", "d1")])
    code, _, err = cli("qrels", "import", C, "s1", "llm", qrels, "--judge-kind", "llm",
                       "--answers", answers, "--judge-input", short)
    assert code != 0 and len(err.strip().splitlines()) == 1, err
    assert f"{answers}: 2 answers for the 1 candidates of {short}" in err, err
    result = api.qrels_import(C, "s1", "llm", qrels, judge_kind="llm", answers=answers)
    assert (result.n_judgments, result.n_unparsed) == (1, 1)


def test_a_sidecar_completes_an_umbrela_name_and_may_not_contradict_it(snap: Path,
                                                                       cli) -> None:
    from tcdb import api

    path = snap / "rag24.test_gpt-4o_23_0_1.txt"
    path.write_text("1 Q0 d1 3\n2 Q0 d4 2\n", encoding="utf-8")
    wrong = _sidecar(snap, "judge_kind: llm\nprovider: openai\nmodel: gpt-4o-mini\n",
                     "wrong.yaml")
    code, _, err = cli("qrels", "import", C, "s1", "u", path, "--umbrela",
                       "--provenance", wrong)
    assert code != 0 and len(err.strip().splitlines()) == 1, err
    assert f"{wrong}:3: model 'gpt-4o-mini', but the UMBRELA file name says 'gpt-4o'" in err
    right = _sidecar(snap, "judge_kind: llm\nprovider: openai\njudged_at: 2025-09-01\n")
    api.qrels_import(C, "s1", "u", path, umbrela=True, provenance=right)
    p = api.qrels(C, "s1", "u").provenance
    assert p is not None
    assert (p.model, p.provider, p.judged_grades, p.judged_at) == (
        "gpt-4o", "openai", "23", dt.date(2025, 9, 1))
