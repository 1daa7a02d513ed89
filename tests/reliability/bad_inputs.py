"""The bad-input corpus: each case writes its bad file (or picks its bad option) and gives the
command line, what the error must name (a file, an id, an option), the line and the reason.

Every case's files live in a folder whose name holds Rich markup and an emoji code
(`[bold]…:thumbs_up:`), so each case also checks that the error prints the path as written.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

COLLECTION = "c"
SNAPSHOT = "s1"
DOCS = {f"d{i}": f"document {i} about things" for i in range(1, 7)}
TOPICS = {"q1": "first query", "q2": "second query"}
QRELS = [("q1", "d1", 1), ("q2", "d2", 0)]
RUN = [("q1", "d1", 3.0), ("q1", "d2", 2.0), ("q2", "d3", 1.5), ("q2", "d4", 1.0)]
TREC_DOC = "<DOC>\n<DOCNO>{}</DOCNO>\n<TEXT>\n{}\n</TEXT>\n</DOC>\n"


@dataclass(frozen=True)
class World:
    """What the database holds before every case, and its files."""

    folder: Path
    docs: Path
    topics: Path
    qrels: Path
    pool_trec: Path  # the pool `p1` exported, as assessors receive it
    pool_csv: Path
    pool_jsonl: Path
    irds_home: Path  # a longeval-web layout whose 2022-07 folder holds nothing yet


@dataclass(frozen=True)
class Invocation:
    argv: list[str]
    names: str  # what the message must name: the file, id, URL or option
    env: dict[str, str] | None = None


@dataclass(frozen=True)
class Case:
    id: str
    make: Callable[[World, Path], Invocation]
    reason: str  # a piece of the reason the message gives
    line: int | None = None  # the line it names (None: no line, e.g. an empty file)


def write(folder: Path, name: str, content: str | bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def _docs(name: str, content: str | bytes, *, collection: str = COLLECTION
          ) -> Callable[[World, Path], Invocation]:
    def make(world: World, folder: Path) -> Invocation:
        path = write(folder, name, content)
        return Invocation(["snapshot", "ingest", collection, "new", "--docs", str(path),
                           "--topics", str(world.topics)], str(path))
    return make


def _topics(content: str, name: str = "topics.txt") -> Callable[[World, Path], Invocation]:
    def make(world: World, folder: Path) -> Invocation:
        path = write(folder, name, content)
        return Invocation(["snapshot", "ingest", COLLECTION, "new", "--docs", str(world.docs),
                           "--topics", str(path)], str(path))
    return make


def _qrels(content: str | bytes, *, command: str = "ingest"
           ) -> Callable[[World, Path], Invocation]:
    def make(world: World, folder: Path) -> Invocation:
        path = write(folder, "qrels.txt", content)
        if command == "ingest":
            argv = ["snapshot", "ingest", COLLECTION, "new", "--docs", str(world.docs),
                    "--topics", str(world.topics), "--qrels", str(path)]
        else:
            argv = ["qrels", "import", COLLECTION, SNAPSHOT, "extra", str(path)]
        return Invocation(argv, str(path))
    return make


def _run(content: str | bytes, *extra: str) -> Callable[[World, Path], Invocation]:
    def make(world: World, folder: Path) -> Invocation:
        path = write(folder, "bad.run", content)
        return Invocation(["run", "import", COLLECTION, SNAPSHOT, str(path), *extra], str(path))
    return make


def _metadata(content: str) -> Callable[[World, Path], Invocation]:
    def make(world: World, folder: Path) -> Invocation:
        run = write(folder, "r2.run", "q1 Q0 d1 1 1.0 r2\n")
        table = write(folder, "runs.csv", content)
        return Invocation(["run", "import", COLLECTION, SNAPSHOT, str(run), "--metadata",
                           str(table)], str(table))
    return make


def _judgments(content: str | Callable[[World], str], fmt: str
               ) -> Callable[[World, Path], Invocation]:
    def make(world: World, folder: Path) -> Invocation:
        text = content(world) if callable(content) else content
        path = write(folder, f"judged.{fmt}", text)
        return Invocation(["pool", "import-judgments", "p1", str(path), "--format", fmt],
                          str(path))
    return make


def _spec(content: str) -> Callable[[World, Path], Invocation]:
    def make(world: World, folder: Path) -> Invocation:
        path = write(folder, "spec.yaml", content)
        return Invocation(["collection", "sync", str(path)], str(path))
    return make


def _argv(*argv: str, names: str, env: Callable[[World], dict[str, str]] | None = None
          ) -> Callable[[World, Path], Invocation]:
    def make(world: World, folder: Path) -> Invocation:
        return Invocation(list(argv), names, env(world) if env else None)
    return make


def _unknown_longeval(world: World, folder: Path) -> Invocation:
    home = folder / "irds-home"  # empty: registering longeval-web would download it
    home.mkdir()
    return Invocation(["snapshot", "ingest", COLLECTION, "new", "--irds",
                       "longeval-web/2031-01"], "longeval-web/2031-01",
                      {"IR_DATASETS_HOME": str(home)})


def _gzip_garbage() -> bytes:
    return gzip.compress(b'{"_id": "a", "text": "x"}\n' * 50)[:30]


SPEC = "name: speccoll\ngrades: [0, 2]\nsnapshots:\n  - {label: a, docs: docs.trec}\n"

CASES: list[Case] = [
    # --- documents: TREC SGML, JSONL, BEIR corpus ------------------------------------------
    Case("trec-without-docno", _docs("docs.trec", "<DOC>\n<TEXT>\nx\n</TEXT>\n</DOC>\n"),
         "document without <DOCNO>", 1),
    Case("trec-second-without-docno",
         _docs("docs.trec", TREC_DOC.format("a", "x") + "<DOC>\n<TEXT>\ny\n</TEXT>\n</DOC>\n"),
         "document without <DOCNO>", 7),
    Case("trec-truncated", _docs("docs.trec", "<DOC>\n<DOCNO>a</DOCNO>\n<TEXT>\nx\n"),
         "not closed by a </DOC> line", 1),
    Case("trec-bad-utf8", _docs("docs.trec", TREC_DOC.format("a", "x").encode()
                                + b"<DOC>\n<DOCNO>b</DOCNO>\n<TEXT>\n\xff\xfe\n</TEXT>\n</DOC>\n"),
         "are not valid UTF-8", 10),
    Case("trec-empty-file", _docs("docs.trec", ""), "no documents"),
    Case("trec-no-documents-in-text", _docs("docs.trec", "just some text\n"), "no documents"),
    Case("jsonl-malformed", _docs("docs.jsonl", '{"_id": "a", "text": "x"}\n{"_id": "b",\n'),
         "malformed JSON", 2),
    Case("jsonl-without-id", _docs("docs.jsonl", '{"text": "x"}\n'),
         "document without an id", 1),
    Case("jsonl-without-text", _docs("docs.jsonl", '\n{"_id": "a"}\n'),
         "without a text", 2),
    Case("jsonl-not-an-object", _docs("docs.jsonl", '[1, 2]\n'), "expected a JSON object", 1),
    Case("jsonl-empty-file", _docs("docs.jsonl", ""), "no documents"),
    Case("jsonl-blank-lines-only", _docs("docs.jsonl", "\n\n  \n"), "no documents"),
    Case("jsonl-corrupt-gzip", _docs("docs.jsonl.gz", _gzip_garbage()), "cannot read", 1),
    Case("beir-title-not-text",
         _docs("corpus.jsonl", '{"_id": "a", "title": 3, "text": "x"}\n'),
         "title is not a string", 1),
    Case("same-id-two-texts", _docs("docs.trec", TREC_DOC.format("a", "x")
                                    + TREC_DOC.format("a", "y")), "with different texts"),
    Case("url-identity-without-url", _docs("docs.jsonl", '{"_id": "a", "text": "x"}\n',
                                           collection="web"), "has no URL"),
    # --- topics ------------------------------------------------------------------------------
    Case("topics-tsv-three-columns", _topics("q1\tfirst\nq2\tsecond\textra\n"),
         "expected 2 tab-separated columns", 2),
    Case("topics-duplicate-id", _topics("q1\tfirst\nq1\tagain\n"), "duplicate topic id", 2),
    Case("topics-empty-query", _topics("q1\tfirst\nq2\t \n"), "has an empty query", 2),
    Case("topics-trec-unclosed", _topics("<top>\n<num> Number: 1\n<title> x\n"),
         "not closed with </top>", 4),
    Case("topics-xml-malformed", _topics("<topics>\n<topic number='1'>\n<query>x</topic>\n"),
         "not well-formed XML", 3),
    Case("topics-beir-without-id", _topics('{"_id": "q1", "text": "x"}\n{"text": "y"}\n',
                                           "queries.jsonl"), "missing key '_id'", 2),
    Case("topics-beir-id-null", _topics('{"_id": "q1", "text": "x"}\n{"_id": null, "text": "y"}\n',
                                        "queries.jsonl"), "'_id' is null, not a topic id", 2),
    Case("topics-beir-id-boolean", _topics('{"_id": true, "text": "x"}\n', "queries.jsonl"),
         "'_id' is a boolean, not a topic id", 1),
    Case("topics-beir-text-object", _topics('{"_id": "q1", "text": {"a": 1}}\n', "queries.jsonl"),
         "'text' is an object, not a string", 1),
    Case("topics-empty-file", _topics(""), "has no topics"),
    # --- qrels ---------------------------------------------------------------------------------
    Case("qrels-three-columns", _qrels("q1 0 d1 1\nq1 0 d2\n"), "expected 4 columns", 2),
    Case("qrels-grade-not-integer", _qrels("q1 0 d1 high\n"), "is not an integer", 1),
    Case("qrels-judged-twice", _qrels("q1 0 d1 1\nq1 0 d1 1\n"), "duplicate judgment", 2),
    Case("qrels-unknown-topic", _qrels("q1 0 d1 1\nq9 0 d2 1\n"), "topic 'q9' is not in", 2),
    Case("qrels-grade-off-scale", _qrels("q1 0 d1 3\n"), "outside the collection's scale", 1),
    Case("qrels-beir-columns", _qrels("query-id\tcorpus-id\tscore\nq1\td1\n"),
         "expected 3 tab-separated columns", 2),
    Case("qrels-empty-file", _qrels(""), "has no judgments"),
    Case("qrels-import-unknown-document", _qrels("q1 0 d1 1\nq2 0 nope 1\n", command="import"),
         "document 'nope' is not in snapshot", 2),
    Case("qrels-import-bad-utf8", _qrels(b"q1 0 d1 1\nq2 0 d\xe9 1\n", command="import"),
         "not valid UTF-8", 2),
    # --- runs ----------------------------------------------------------------------------------
    Case("run-five-columns", _run("q1 Q0 d1 1 2.0 r2\nq1 Q0 d2 2 r2\n"),
         "expected 6 whitespace-separated columns", 2),
    Case("run-score-not-a-number", _run("q1 Q0 d1 1 high r2\n"), "is not a number", 1),
    Case("run-score-infinite", _run("q1 Q0 d1 1 2.0 r2\nq1 Q0 d2 2 inf r2\n"),
         "not a finite number", 2),
    Case("run-rank-not-integer", _run("q1 Q0 d1 one 2.0 r2\n"), "is not an integer", 1),
    Case("run-two-tags", _run("q1 Q0 d1 1 2.0 r2\nq1 Q0 d2 2 1.0 r3\n"), "a run file holds one",
         2),
    Case("run-document-twice", _run("q1 Q0 d1 1 2.0 r2\nq1 Q0 d1 2 1.0 r2\n"),
         "appears twice for topic", 2),
    Case("run-unknown-topic", _run("q1 Q0 d1 1 2.0 r2\nq9 Q0 d1 1 2.0 r2\n"),
         "topic 'q9' is not in snapshot", 2),
    Case("run-unknown-document", _run("q1 Q0 d1 1 2.0 r2\nq1 Q0 nope 2 1.0 r2\n"),
         "document 'nope' (topic 'q1') is not in snapshot", 2),
    Case("run-empty-file", _run(""), "run file has no rows"),
    Case("run-metadata-bad-flag", _metadata("tag,contributed\nr2,maybe\n"),
         "contributed 'maybe' is not yes/no", 2),
    # --- issue 32: limits, control characters, numbers, ids with whitespace (tcdb.limits) ----
    Case("run-rank-beyond-integer", _run("q1 Q0 d1 1 2.0 r2\nq1 Q0 d2 3000000000 1.0 r2\n"),
         "rank 3000000000 is out of range", 2),
    Case("run-rank-underscore", _run("q1 Q0 d1 1_0 2.0 r2\n"), "rank '1_0' is not an integer", 1),
    Case("run-score-underscore", _run("q1 Q0 d1 1 2_5 r2\n"), "score '2_5' is not a number", 1),
    Case("run-doc-with-nul", _run("q1 Q0 d1 1 2.0 r2\nq1 Q0 d\x002 2 1.0 r2\n"),
         "contains a control character (U+0000)", 2),
    Case("run-doc-with-no-break-space", _run("q1 Q0 d\u00a01 1 2.0 r2\n", "--allow-unknown-docs"),
         "contains whitespace (U+00A0)", 1),
    Case("qrels-grade-beyond-smallint", _qrels("q1 0 d1 1\nq2 0 d2 40000\n", command="import"),
         "grade 40000 is out of range", 2),
    Case("qrels-iteration-too-long", _qrels("q1 " + "9" * 33 + " d1 1\n", command="import"),
         "iteration", 1),
    Case("topics-id-too-long", _topics("q1\tfirst\n" + "q" * 201 + "\tsecond\n"),
         "is longer than 200 characters", 2),
    Case("jsonl-id-with-space", _docs("docs.jsonl", '{"_id": "d 1", "text": "x"}\n'),
         "contains whitespace (U+0020)", 1),
    # --- judgments, and pool exports coming back as judgments ----------------------------------
    # the exported forms sent back unfilled: their grades are missing, said on the first row
    Case("pool-trec-export-as-judgments", _judgments(lambda w: w.pool_trec.read_text(), "trec"),
         "grade is missing", 1),
    Case("pool-csv-export-as-judgments", _judgments(lambda w: w.pool_csv.read_text(), "csv"),
         "grade is missing", 2),
    Case("pool-jsonl-export-as-judgments",
         _judgments(lambda w: w.pool_jsonl.read_text(), "csv"), "header lacks column(s)", 1),
    Case("judgment-not-in-pool", _judgments("topic_id,doc_id,grade\nq1,d6,1\n", "csv"),
         "is not in pool 'p1'", 2),
    Case("judgment-grade-off-scale", _judgments("topic_id,doc_id,grade\nq1,d1,7\n", "csv"),
         "outside the scale", 2),
    Case("judgment-grade-missing", _judgments("topic_id,doc_id,grade\nq1,d1,\n", "csv"),
         "grade is missing", 2),
    # --- collection specs (YAML) ----------------------------------------------------------------
    Case("spec-not-yaml", _spec("name: x\nsnapshots: [\n  - {label: a\n"), "not valid YAML", 3),
    Case("spec-without-name", _spec("grades: [0, 2]\n"), "name is missing", 1),
    Case("spec-bad-identity", _spec("name: x\ndoc_identity: title\n"),
         "doc_identity: must be 'doc_id' or 'url', not the text 'title'", 2),
    Case("spec-grades-not-integers", _spec("name: x\ngrades: [low, high]\n"),
         "grades [1]: must be a whole number, not the text 'low'", 2),
    Case("spec-irds-and-docs",
         _spec("name: x\nsnapshots:\n  - {label: a, irds: vaswani, docs: d.trec}\n"),
         "exactly one of `irds`, `docs` or `cocktail`", 3),
    Case("spec-bad-date", _spec(SPEC.replace("docs.trec}", "docs.trec,\n      date: 2022-13-01}")),
         "bad date", 5),
    Case("spec-label-twice", _spec(SPEC + "  - {label: a, irds: vaswani}\n"),
         "declared twice", 5),
    # --- ir_datasets ids ------------------------------------------------------------------------
    Case("irds-longeval-unknown-snapshot", _unknown_longeval,
         "longeval-web has no snapshot '2031-01'"),
    Case("irds-longeval-folder-not-filled-yet",
         _argv("snapshot", "ingest", COLLECTION, "new", "--irds", "longeval-web/2022-07",
               names="2022-07_fr", env=lambda w: {"IR_DATASETS_HOME": str(w.irds_home)}),
         "no documents"),
    Case("irds-unknown-id", _argv("snapshot", "ingest", COLLECTION, "new", "--irds",
                                  "no-such/dataset", names="'no-such/dataset'"),
         "unknown ir_datasets id"),
    Case("irds-and-docs", _argv("snapshot", "ingest", COLLECTION, "new", "--irds", "vaswani",
                                "--docs", "d.trec", names="--irds/--docs"), "either"),
    # --- database URLs and options -------------------------------------------------------------
    Case("url-unsupported", _argv("info", "--database-url", "mysql://u@h/db",
                                  names="mysql://u@h/db"), "unsupported database"),
    Case("url-psycopg2", _argv("info", "--database-url", "postgresql+psycopg2://u@h/db",
                               names="postgresql+psycopg2://u@h/db"), "psycopg 3"),
    Case("url-malformed", _argv("info", "--database-url", "not a url", names="'not a url'"),
         "malformed database URL"),
    Case("url-sqlite-folder-missing",
         _argv("info", "--database-url", "sqlite:////no/such/folder/t.sqlite",
               names="/no/such/folder"), "does not exist"),
    Case("option-bad-date", _argv("snapshot", "ingest", COLLECTION, "new", "--docs", "x",
                                  "--date", "2022-13-45", names="--date"), "not a date"),
    Case("option-depth-zero", _argv("pool", "build", COLLECTION, SNAPSHOT, "p2", "--depth", "0",
                                    "--all-runs", names="--depth"), "at least 1"),
]
