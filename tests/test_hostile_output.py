"""Untrusted names and texts reach every export and every dashboard page as data: CSV cells a
spreadsheet would evaluate start with `'` (OWASP), TREC, JSONL and JSON keep the exact text, and
the pages show names as literal text (no Markdown image, link or HTML).

One hostile collection (`tests.hostile`) on SQLite for the module: the rules are the same on
both databases and the texts come back from either unchanged (tests/test_db.py).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.builders import PAGES
from tests.dashboard_pages import clear_cache, open_page
from tests.hostile import (
    AT_SUM,
    COLLECTION,
    DESCRIPTION,
    FORMULA,
    HTML,
    IMAGE,
    LABELS,
    LINK,
    POOL,
    QUERIES,
    TAGS,
    TEXTS,
    seed_hostile,
)

DANGEROUS = ("=", "+", "-", "@", "\t", "\r")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    import os

    from tests.databases import create_database

    databases = create_database("sqlite", tmp_path_factory.mktemp("hostile-db"))
    url = next(databases)
    previous = os.environ.get("TCDB_DATABASE_URL")
    os.environ["TCDB_DATABASE_URL"] = url
    try:
        seed_hostile(tmp_path_factory.mktemp("hostile"))
        yield url
    finally:
        if previous is None:
            os.environ.pop("TCDB_DATABASE_URL", None)
        else:
            os.environ["TCDB_DATABASE_URL"] = previous
        next(databases, None)


def _spreadsheet_safe(cell: str) -> bool:
    """What a spreadsheet would not evaluate: text not starting with a formula character, or
    a plain number."""
    number = re.fullmatch(r"-?\d+(\.\d+)?(e-?\d+)?", cell)
    return not cell.startswith(DANGEROUS) or number is not None


def _rows(text: str, delimiter: str = ",") -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))


# --------------------------------------------------------------------------- the one rule


def test_safe_cell_is_owasps_rule() -> None:
    import pandas as pd

    from tcdb.collections.files.csv_safe import frame_csv, write_csv
    from tcdb.escaping import csv_cell as safe_cell
    from tcdb.escaping import csv_plain as plain_cell

    for text in (FORMULA, AT_SUM, "+SUM(A1)", "-2+3", "\tTAB", "\rCR", "-inf"):
        assert safe_cell(text) == "'" + text and plain_cell(safe_cell(text)) == text
    for same in ("plain", "", "'=already", "a=b", " =1", "-1", "-0.0014", "+3", "1e-5"):
        assert safe_cell(same) == same
    for number in (-1, -0.0014, 0.5, None, True):
        assert safe_cell(number) == number
    text = write_csv([[FORMULA, -0.0014, "a,b", 'say "x"']], header=["@h", "v", "c", "q"])
    assert text == "'@h,v,c,q\n'=cmd|' /C calc'!A0,-0.0014,\"a,b\",\"say \"\"x\"\"\"\n"
    frame = pd.DataFrame({"run": [AT_SUM, "bm25"], "value": [-0.25, 1.0], "n": [-1, 2]})
    assert _rows(frame_csv(frame) or "") == [["run", "value", "n"], ["'@SUM(1+1)", "-0.25", "-1"],
                                             ["bm25", "1.0", "2"]]
    assert _rows(frame_csv(frame, sep="\t") or "", "\t")[1][0] == "'@SUM(1+1)"


# ------------------------------------------------------------------------------- exports


def test_pool_export_csv_is_neutralised_trec_and_jsonl_exact(hostile: str,
                                                              tmp_path: Path) -> None:
    """pool export: CSV for spreadsheets neutralised; JSONL and TREC the exact texts and ids;
    an assessor's CSV back (our columns + grade) reads the exact ids."""
    from tcdb.api import pool_export
    from tcdb.collections.assessor_forms.formats import read_judgments

    out = {fmt: tmp_path / f"pool.{fmt}" for fmt in ("csv", "jsonl", "trec")}
    for fmt, path in out.items():
        pool_export(POOL, collection=COLLECTION, snapshot=LABELS[-1], format=fmt, out=path)
    rows = _rows(out["csv"].read_text(encoding="utf-8"))
    assert rows[0] == ["topic_id", "query", "description", "doc_id", "text", "grade",
                       "grade_scale"]
    for topic, query, _, doc, text, grade, _scale in rows[1:]:
        assert grade == ""  # for the assessor to fill
        assert all(_spreadsheet_safe(cell) for cell in (topic, query, doc, text)), rows
        exact_query, exact_text = QUERIES[topic], TEXTS[doc.removeprefix("'")]
        assert query == (("'" + exact_query) if exact_query.startswith(DANGEROUS) and
                         exact_query != "-1" else exact_query)
        assert text == exact_text if exact_text in ("-1", "plain text") else (
            text in (exact_text, "'" + exact_text))
    assert {r[4] for r in rows[1:]} >= {"'" + FORMULA, "'@SUM(1+1)", "'+SUM(A1)", "-1"}
    assert "'@d9" in {r[3] for r in rows[1:]}
    lines = [json.loads(line) for line in out["jsonl"].read_text(encoding="utf-8").splitlines()]
    assert {(x["query"], x["text"]) for x in lines} <= {(QUERIES[x["topic_id"]],
                                                        TEXTS[x["doc_id"]]) for x in lines}
    assert {x["text"] for x in lines} >= {FORMULA, AT_SUM, "\tTAB"}
    assert "@d9" in out["trec"].read_text(encoding="utf-8").split()
    back = tmp_path / "judged.csv"
    back.write_text("\n".join([",".join(rows[0])] + [
        ",".join(f'"{c}"' for c in row[:5]) + ",1," + f'"{row[6]}"' for row in rows[1:]])
        + "\n", encoding="utf-8")
    assert {j.doc_id for j in read_judgments(back, "csv")} == {r[3].removeprefix("'")
                                                               for r in rows[1:]}


def test_scores_csv_and_json(hostile: str, cli: Any) -> None:
    """scores table --csv: run tags neutralised, scores numbers; --json the exact tags."""
    code, out, err = cli("scores", COLLECTION, LABELS[-1], "--measure", "AP", "--csv")
    assert code == 0, err
    rows = _rows(out)
    run = rows[0].index("run")
    runs = {r[run] for r in rows[1:]}
    assert runs == {("'" + t) if t.startswith(DANGEROUS) else t for t in TAGS.values()}
    assert all(_spreadsheet_safe(cell) for r in rows for cell in r)
    value = rows[0].index("value")
    assert all(0 <= float(r[value]) <= 1 for r in rows[1:])
    code, out, err = cli("scores", COLLECTION, LABELS[-1], "--measure", "AP", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert {r["run"] for r in report["means"]} == set(TAGS.values())  # exact, not neutralised
    assert {r["run"] for r in report["lineage"]["runs"]} == set(TAGS.values())


def test_persistence_per_topic_csv(hostile: str, cli: Any, tmp_path: Path) -> None:
    """report persistence --per-topic FILE: systems neutralised, negative deltas numbers."""
    path = tmp_path / "deltas.csv"
    code, out, err = cli("report", "persistence", COLLECTION, "--snapshots", *LABELS,
                         "--pivot", "bm25", "--measure", "AP", "--per-topic", path)
    assert code == 0, err
    rows = _rows(path.read_text(encoding="utf-8"))
    header = rows[0]
    systems = {r[header.index("system")] for r in rows[1:]}
    assert "'@SUM(1+1)" in systems and "'" + TAGS["formula"] in systems
    assert all(_spreadsheet_safe(cell) for r in rows for cell in r)
    deltas = [r[header.index("delta")] for r in rows[1:] if r[header.index("delta")]]
    assert any(d.startswith("-") for d in deltas) and all(float(d) == float(d) for d in deltas)
    queries = {r[header.index("topic_key")] for r in rows[1:]} if "topic_key" in header else set()
    assert all(_spreadsheet_safe(q) for q in queries)


def test_run_list_json_keeps_the_exact_tags(hostile: str, cli: Any) -> None:
    code, out, err = cli("run", "list", COLLECTION, LABELS[-1], "--json")
    assert code == 0, err
    listed = json.loads(out)
    key = "tag" if "tag" in listed[0] else "run"
    assert {r[key] for r in listed} == set(TAGS.values())


# ------------------------------------------------------------------------------ dashboard

# Markdown that would render: an image or a link not escaped, an HTML tag not escaped, a bare
# URL or address outside an inline code span (GFM links those however they are escaped).
RENDERED = re.compile(r"(?<!\\)!?(?<!\\)\[[^\]]*(?<!\\)\]\(|(?<!\\)<[A-Za-z/!]|https?://|www\.")
CODE_SPAN = re.compile(r"(?<!\\)(`+)(.+?)(?<!`)\1(?!`)")


def _outside_code(text: str) -> str:
    """The Markdown text without its inline code spans (nothing inside one renders)."""
    return CODE_SPAN.sub(" ", text)


MARKDOWN_ELEMENTS = ("title", "header", "subheader", "markdown", "caption", "info", "warning",
                     "error", "success")


def _markdown_texts(at: Any) -> list[str]:
    """Every string of the page that Streamlit renders as Markdown: texts, alerts, labels."""
    texts = [e.value for kind in MARKDOWN_ELEMENTS for e in at.get(kind)]
    texts += [m.label for m in at.metric] + [str(m.value) for m in at.metric]
    for kind in ("selectbox", "multiselect", "number_input", "toggle", "text_input"):
        texts += [w.label for w in at.get(kind)]
    texts += [b.proto.label for b in at.get("download_button")]
    texts += [e.label for e in at.expander]
    return texts


@pytest.mark.parametrize("page", list(PAGES))
def test_every_page_shows_hostile_names_as_text(hostile: str, page: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """No Markdown string of the page holds a rendering image, link or tag; the pickers offer
    the exact names; every CSV download is neutralised."""
    import streamlit as st

    from tcdb.dashboard.widgets import plain

    monkeypatch.setenv("TCDB_DATABASE_URL", hostile)
    clear_cache()
    sent: list[tuple[str, bytes]] = []
    real = st.download_button

    def recorded(label: str, data: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append((label, data if isinstance(data, bytes) else str(data).encode()))
        return real(label, data, *args, **kwargs)

    monkeypatch.setattr(st, "download_button", recorded)
    params = {"pivot": "bm25", "metric": "nDCG@10"} if page in ("persistence", "literature") \
        else {}
    at = open_page(page, collection=COLLECTION, **params)
    texts = _markdown_texts(at)
    assert texts
    for text in texts:
        assert not RENDERED.search(_outside_code(text)), (page, text)
        assert "\u2060" not in text, (page, text)  # nothing invisible for a reader to copy
    if page == "overview":
        assert any(plain(DESCRIPTION) in t for t in texts)
        shown = [e.value for e in at.dataframe]
        assert any(DESCRIPTION in frame.to_string() or (frame == DESCRIPTION).any().any()
                   for frame in shown)
    if page in ("compare",):
        offered = {o for w in at.multiselect for o in w.options}
        assert set(TAGS.values()) <= offered  # as options, shown as plain text
    for label, data in sent:
        if label.endswith(".csv"):
            for row in _rows(data.decode("utf-8")):
                assert all(_spreadsheet_safe(cell) for cell in row), (page, label, row)
    if page in ("compare", "persistence", "pools"):
        assert sent, page


def test_plain_escapes_markdown_and_breaks_links() -> None:
    """Escaped where escaping holds; a word GFM would link (or Streamlit draw) anyway goes in a
    code span; nothing is added that a reader would copy (the browser test renders them)."""
    from tcdb.dashboard.widgets import code, plain

    assert plain(IMAGE) == f"`{IMAGE}`"
    for hostile in (IMAGE, "[text](http://x.org)", "<img src=x onerror=alert(1)>",
                    "http://x.org/a.png", "www.example.org", "a@b.org"):
        assert RENDERED.search(hostile) or "@" in hostile
        assert not RENDERED.search(_outside_code(plain(hostile))), hostile
    assert plain("<img src=x onerror=alert(1)>") == "\\<img src=x onerror=alert(1)\\>"
    assert plain("[t](u) *x* <b>") == "\\[t\\](u) \\*x\\* \\<b\\>"
    assert plain("www.example.org a@b.org") == "`www.example.org` `a@b.org`"
    assert plain("- item\n\n# head") == "\\- item # head"  # one line: # is no heading
    assert plain("1. one") == "1\\. one" and plain("2024-03") == "2024-03"
    assert plain("nDCG@10") == "nDCG@10" and plain("sys_001") == "sys\\_001"
    assert plain(":material/home: :red[x] $x$") == "\\:material\\/home\\: \\:red\\[x\\] \\$x\\$"
    assert plain(":material_home: :smile:") == "`:material_home:` `:smile:`"
    for text in (IMAGE, LINK, HTML, DESCRIPTION, "*x*", ":material/home:"):
        assert "\u2060" not in plain(text)
    assert code("tcdb pool build `x`") == "`` tcdb pool build `x` ``"
    assert code("tcdb literature import FILE [t](u)") == "`tcdb literature import FILE [t](u)`"
