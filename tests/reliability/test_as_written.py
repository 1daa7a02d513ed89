"""Names people give (labels, paths, run tags) print as written: Rich markup such as `[bold]`
and emoji codes such as `:thumbs_up:` in them are text, in errors and in what a command says
it did."""

from __future__ import annotations

from pathlib import Path

from tests.builders import write_documents, write_qrels_file, write_topics

ODD = "[bold]x:thumbs_up:"


def test_what_ingest_and_qrels_commands_say_keeps_names_as_written(db: str, cli,
                                                                   tmp_path: Path) -> None:
    folder = tmp_path / ODD
    docs = write_documents(folder / "docs.trec", {"d1": "one", "d2": "two"})
    topics = write_topics(folder / "topics.tsv", {"q1": "query"})
    qrels = write_qrels_file(folder / "qrels.txt", [("q1", "d1", 1)])
    assert cli("collection", "add", "c")[0] == 0
    ingest = ["snapshot", "ingest", "c", ODD, "--docs", docs, "--topics", topics, "--qrels",
              qrels]
    code, out, err = cli(*ingest)
    assert code == 0, err
    assert f"c/{ODD} ingested" in out
    code, out, _ = cli(*ingest)
    assert out == f"snapshot c/{ODD} is already ingested from this source: nothing to do\n"
    code, out, err = cli("qrels", "import", "c", ODD, ODD, qrels)
    assert code == 0, err
    assert out.startswith(f"qrels {ODD} (derived): imported")
    target = folder / "out.txt"
    code, out, err = cli("qrels", "export", "c", ODD, ODD, "--out", target)
    assert code == 0, err
    assert out == f"qrels {ODD}: 1 judgments over 1 topics → {target} (trec)\n"


def test_an_error_names_a_label_as_written(db: str, cli, tmp_path: Path) -> None:
    assert cli("collection", "add", "c")[0] == 0
    code, _, err = cli("evaluate", "c", ODD, "--measure", "AP")
    assert code == 1
    assert f"no complete snapshot '{ODD}' in 'c'" in err.splitlines()[-1]
