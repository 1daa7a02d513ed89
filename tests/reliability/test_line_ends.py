"""No line-end convention can make records disappear: every line-based reader gives the same
records for a file written with LF, CRLF, CR alone (old Mac tools) or a mix. A CR-only run file
imported "successfully" as 1 entry of 4, its lines run together into one. And a topic list
line holding two ids (`q1 q2`) is refused, not read as q1 with q2 dropped."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tcdb.collections.assessor_forms.formats import read_judgments
from tcdb.collections.qrels.formats import read_qrels
from tcdb.collections.runs.trec import read_run
from tcdb.collections.scores.tidy import read_tidy_scores
from tcdb.collections.scores.trec_eval import read_trec_eval
from tcdb.collections.topics.formats import read_topics
from tcdb.collections.topics.ids import read_topics_or_ids
from tcdb.errors import InputError

CONVENTIONS = {"LF": "\n", "CRLF": "\r\n", "CR": "\r"}


def _run(path: Path) -> Any:
    run = read_run(path)
    return run.tag, list(run.topics), list(run.docs), list(run.ranks), list(run.scores)


def _records(read: Callable[[Path], Any]) -> Callable[[Path], Any]:
    """The records without where they came from (file and line differ by design)."""
    def strip(path: Path) -> Any:
        return [(getattr(r, "topic_id", None), getattr(r, "doc_id", None),
                 getattr(r, "grade", None), getattr(r, "query", None)) for r in read(path)]
    return strip


def _eval(path: Path) -> Any:
    out = read_trec_eval(path)
    return sorted(out.per_topic), sorted(out.aggregate.items())


READERS: dict[str, tuple[list[str], Callable[[Path], Any]]] = {
    "run": (["q1 Q0 d1 1 3.0 r", "q1 Q0 d2 2 2.0 r", "q2 Q0 d3 1 1.0 r",
             "q2 Q0 d4 2 0.5 r"], _run),
    "qrels": (["q1 0 d1 1", "q1 0 d2 0", "q2 0 d3 2", "q2 0 d4 1"], _records(read_qrels)),
    "TSV topics": (["q1\tparis weather", "q2\ttrain strikes", "q3\tcheap flights"],
                   _records(read_topics)),
    "topic ids": (["qid", "q1", "q2", "q3"], _records(read_topics_or_ids)),
    "trec_eval -q": (["map\tq1\t0.5", "map\tq2\t0.25", "P_5\tq1\t0.4", "P_5\tq2\t0.2",
                      "map\tall\t0.375", "P_5\tall\t0.3"], _eval),
    "tidy scores": (["run,topic,measure,value", "r1,q1,AP,0.5", "r1,q2,AP,0.25",
                     "r2,q1,AP,0.1"], lambda p: sorted(read_tidy_scores(p))),
    "judgments trec": (["q1 0 d1 1", "q1 0 d2 0", "q2 0 d3 2"],
                       _records(lambda p: read_judgments(p, "trec"))),
    "judgments jsonl": (['{"topic_id": "q1", "doc_id": "d1", "grade": 1}',
                         '{"topic_id": "q1", "doc_id": "d2", "grade": 0}',
                         '{"topic_id": "q2", "doc_id": "d3", "grade": 2}'],
                        _records(lambda p: read_judgments(p, "jsonl"))),
}


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("ending", [*CONVENTIONS, "mixed"])
def test_every_line_end_convention_reads_the_same_records(
    reader: str, ending: str, tmp_path: Path
) -> None:
    lines, read = READERS[reader]
    reference = tmp_path / "lf.txt"
    reference.write_bytes(("\n".join(lines) + "\n").encode())
    if ending == "mixed":
        ends = ["\r\n", "\r", "\n"]
        text = "".join(line + ends[i % 3] for i, line in enumerate(lines))
    else:
        text = "".join(line + CONVENTIONS[ending] for line in lines)
    other = tmp_path / "other.txt"
    other.write_bytes(text.encode())
    expected = read(reference)
    assert expected and read(other) == expected


def test_a_cr_only_run_imports_every_entry(cli, db: str, tmp_path: Path) -> None:
    """Through the CLI, on both databases: 4 lines in, 4 entries stored and listed."""
    docs = tmp_path / "docs.trec"
    docs.write_text("".join(f"<DOC>\n<DOCNO>d{i}</DOCNO>\n<TEXT>text {i}</TEXT>\n</DOC>\n"
                            for i in range(1, 5)), encoding="utf-8")
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tparis weather\n", encoding="utf-8")
    assert cli("collection", "add", "c")[0] == 0
    code, _, err = cli("snapshot", "ingest", "c", "s1", "--docs", docs, "--topics", topics)
    assert code == 0, err
    run = tmp_path / "mac.run"
    run.write_bytes(b"".join(f"q1 Q0 d{i} {i} {5 - i}.0 mac\r".encode() for i in range(1, 5)))
    code, _, err = cli("run", "import", "c", "s1", run)
    assert code == 0, err
    code, out, err = cli("run", "list", "c", "--json")
    assert [r["n_entries"] for r in json.loads(out)] == [4]


def test_a_topic_list_line_with_two_ids_is_refused(tmp_path: Path) -> None:
    from tcdb.catalog.topic_sets import read_topic_list

    listed = tmp_path / "subset.txt"
    listed.write_text("q1\nq2 q3\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_topic_list(listed)
    assert info.value.line == 2 and "found 2 fields (q2, q3)" in str(info.value)
    listed.write_text("q1  # a comment\rq2\r", encoding="utf-8")
    assert read_topic_list(listed) == [(1, "q1"), (2, "q2")]


def test_a_topic_in_another_normal_form_is_named_as_such(cli, db: str, tmp_path: Path) -> None:
    """A run's `café` in NFD against the snapshot's NFC `café`: still refused (ids are compared
    as given), but the message says the snapshot has the same text in NFC."""
    import unicodedata

    nfc = unicodedata.normalize("NFC", "café")
    nfd = unicodedata.normalize("NFD", "café")
    docs = tmp_path / "docs.trec"
    docs.write_text("<DOC>\n<DOCNO>d1</DOCNO>\n<TEXT>text</TEXT>\n</DOC>\n", encoding="utf-8")
    topics = tmp_path / "topics.tsv"
    topics.write_text(f"{nfc}\tparis cafés\n", encoding="utf-8")
    assert cli("collection", "add", "c")[0] == 0
    assert cli("snapshot", "ingest", "c", "s1", "--docs", docs, "--topics", topics)[0] == 0
    run = tmp_path / "nfd.run"
    run.write_text(f"{nfd} Q0 d1 1 1.0 r\n", encoding="utf-8")
    code, _, err = cli("run", "import", "c", "s1", run)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 1 and len(lines) == 1, err
    assert "is not in snapshot 's1'" in lines[0] and "Unicode normal form NFC" in lines[0], err
