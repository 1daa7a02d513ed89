"""trec_eval 10's file grammar (issue 33, item 4): `#` comment lines in run and qrels files are
skipped, and fields after a run line's tag are ignored (trec_eval's own test file `results.trunc`
has them). The same rows are stored as from the file without them, on both databases, and the
run reader's vectorised path agrees with its line reader, line numbers included.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import text

PLAIN_RUN = ["q1 Q0 d1 1 3.0 r9", "q1 Q0 d2 2 2.0 r9", "q2 Q0 d3 1 1.5 r9", "q2 Q0 d4 2 1.0 r9"]
HEADER = ["# run produced by BM25", "# k1=0.9 b=0.4", "#"]  # (ir_metadata: test_ir_metadata)


def _entries(url: str, tag: str) -> list[tuple[str, str, int, float]]:
    from tcdb.storage.db import get_engine

    with get_engine(url).connect() as conn:
        return [tuple(row) for row in conn.execute(text(
            "SELECT st.external_id, sd.external_id, e.rank, e.score FROM run r "
            "JOIN run_entry e ON e.run_id = r.id "
            "JOIN snapshot_topic st ON st.topic_id = e.topic_id AND st.snapshot_id = r.snapshot_id "
            "JOIN snapshot_document sd ON sd.document_id = e.document_id "
            "AND sd.snapshot_id = r.snapshot_id WHERE r.tag = :tag ORDER BY 1, 3"), {"tag": tag})]


def test_comments_and_fields_after_the_tag_import_as_the_plain_run(db: str, cli,
                                                                   tmp_path: Path) -> None:
    from tests.builders import write_documents, write_qrels_file, write_topics

    docs = write_documents(tmp_path / "docs.trec", {f"d{i}": f"text {i}" for i in range(1, 5)})
    topics = write_topics(tmp_path / "topics.tsv", {"q1": "one", "q2": "two"})
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("# judged by NIST\nq1 0 d1 1\n  # an indented comment\nq2 0 d3 2\n")
    assert cli("collection", "add", "c")[0] == 0
    code, _out, err = cli("snapshot", "ingest", "c", "s1", "--docs", str(docs), "--topics",
                          str(topics), "--qrels", str(qrels))
    assert code == 0, err
    plain = tmp_path / "plain.run"
    plain.write_text("\n".join(PLAIN_RUN) + "\n")
    trec10 = tmp_path / "trec10.run"
    lines = [*HEADER, *(f"{line} extra field {i}" for i, line in enumerate(PLAIN_RUN[:2])),
             "# a comment between rows", *PLAIN_RUN[2:]]
    trec10.write_text("\n".join(line.replace("r9", "r10") for line in lines) + "\n")
    for path in (plain, trec10):
        code, _out, err = cli("run", "import", "c", "s1", str(path))
        assert code == 0, err
    assert _entries(db, "r10") == _entries(db, "r9") == [
        ("q1", "d1", 1, 3.0), ("q1", "d2", 2, 2.0), ("q2", "d3", 1, 1.5), ("q2", "d4", 2, 1.0)]
    plain_qrels = tmp_path / "plain.qrels"
    write_qrels_file(plain_qrels, [("q1", "d1", 1), ("q2", "d3", 2)])
    code, out, err = cli("qrels", "import", "c", "s1", "again", str(plain_qrels))
    assert code == 0, err
    assert _judgments(db, "original") == _judgments(db, "again") == [
        ("q1", "d1", 1), ("q2", "d3", 2)]


def _judgments(url: str, name: str) -> list[tuple[str, str, int]]:
    from tcdb.storage.db import get_engine

    with get_engine(url).connect() as conn:
        return [tuple(row) for row in conn.execute(text(
            "SELECT st.external_id, sd.external_id, j.grade FROM qrels_set q "
            "JOIN judgment j ON j.qrels_set_id = q.id "
            "JOIN snapshot_topic st ON st.topic_id = j.topic_id AND st.snapshot_id = q.snapshot_id "
            "JOIN snapshot_document sd ON sd.document_id = j.document_id "
            "AND sd.snapshot_id = q.snapshot_id WHERE q.name = :name ORDER BY 1, 2"),
            {"name": name})]


@settings(max_examples=80, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from(["q1", "q2", "301"]), st.integers(1, 40)),
                     min_size=1, max_size=25, unique=True),
       comments=st.lists(st.tuples(st.integers(0, 30),
                                   st.sampled_from(["# c", "#", "# q1 Q0 d9 1 1.0 t", "  # x",
                                                    "\t# y z"])), max_size=5),
       extra=st.booleans())
def test_the_fast_and_line_readers_agree_on_comments(
    rows: list[tuple[str, int]], comments: list[tuple[int, str]], extra: bool
) -> None:
    from tcdb.collections.runs.fast_parse import parse_fast
    from tcdb.collections.runs.trec import _parse_slow

    lines = [f"{topic} Q0 d{doc} {i + 1} {1.0 / (i + 1)!r} t" + (" x y" if extra else "")
             for i, (topic, doc) in enumerate(rows)]
    expected_lines = list(range(len(lines)))
    for position, comment in sorted(comments, reverse=True):
        at = min(position, len(lines))
        lines.insert(at, comment)
        expected_lines = [n + 1 if n >= at else n for n in expected_lines]
    data = ("\n".join(lines) + "\n").encode()
    slow = _parse_slow(Path("x"), data)
    assert slow[5].tolist() == [n + 1 for n in expected_lines]  # 1-based, comments counted
    assert slow[2] == [f"d{doc}" for _topic, doc in rows]
    fast = parse_fast(data)
    if fast is not None:
        assert fast[:3] == slow[:3]
        for a, b in zip(fast[3:6], slow[3:6], strict=True):
            assert a.tolist() == b.tolist()
    if not extra and not any(c.startswith((" ", "\t")) for _p, c in comments):
        assert fast is not None  # a header of comments keeps the vectorised path
