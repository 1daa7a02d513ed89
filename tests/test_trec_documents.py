"""tcdb's TREC SGML reader must give exactly what ir_datasets' TrecDocs gives, only faster."""

from __future__ import annotations

import contextlib
import gzip
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from ir_datasets.formats import TrecDocs

from tcdb.collections.documents.trec import _canonical, read_trec_documents
from tcdb.collections.documents.trec_markup import FileState, _plain_text, markup_text
from tcdb.collections.sources.records import DocumentRecord
from tcdb.errors import InputError


class _LocalFile:
    """The minimal download-config object TrecDocs needs to read a local file."""

    def __init__(self, path: Path) -> None:
        self._path = path

    def path(self, force: bool = True) -> Path:
        return self._path

    @contextlib.contextmanager
    def stream(self) -> Iterator[object]:
        with open(self._path, "rb") as f:
            yield f


def reference(path: Path) -> list[tuple[str, str]]:
    """What ir_datasets' TrecDocs (default BS4 parser) yields for one file."""
    return [(d.doc_id, d.text) for d in TrecDocs(_LocalFile(path)).docs_iter()]


def ours(paths: Path | list[Path]) -> list[tuple[str, str]]:
    return [(d.doc_id, d.text) for d in read_trec_documents(paths)]


TRICKY = (
    "<DOC>\n<DOCNO> FT911-1 </DOCNO>\n<HEADLINE>\nFT  14 MAY 91 / Markets &amp; money\n"
    "</HEADLINE>\n<TEXT>\nFirst line &eacute;t&#233; &nbsp; R&D &unknown; a < b\n"
    "<p>nested <b>bold <i>italic</i></b> markup</p>\n\n   indented   \n</TEXT>\n</DOC>\n"
    "<DOC>\n<DOCNO>EMPTY-1</DOCNO>\n</DOC>\n"
    "<DOC>\n<DOCNO>EMPTY-TEXT</DOCNO>\n<TEXT>\n</TEXT>\n</DOC>\n"
    "<DOC>\n<DOCNO>\tTABS-AND-SPACES  </DOCNO>\n<TEXT>\nmulti\nline\n\n\ntext\t\n</TEXT>\n"
    "<OTHER>not content</OTHER>\n</DOC>\n"
    "<DOC>\n<DOCNO>TITLE-HEAD</DOCNO>\n<TITLE>\nA title\n</TITLE>\n<HEAD>\nhead\n</HEAD>\n"
    "<TEXT>\n<script>var x = 1;</script><style>p {}</style><!-- comment -->after\n</TEXT>\n</DOC>\n"
    "<DOC>\n<DOCNO>CRLF</DOCNO>\n<TEXT>\r\nwindows\r\nlines\r\n</TEXT>\n</DOC>\n"
    "<DOC>\n<DOCNO>SEPARATORS</DOCNO>\n<TEXT>\nform\x0cfeed\u2028line\x85next\n</TEXT>\n</DOC>\n"
    "<DOC>\n<DOCNO>ONE-LINE</DOCNO>\n<TEXT>inline text</TEXT>\n</DOC>\n"
    "<DOC>\n<DOCNO>AFTER-ONE-LINE</DOCNO>\n<TEXT>\nthe region is still open here\n</TEXT>\n</DOC>\n"
    "<DOC>\n<DOCNO>PRE</DOCNO>\n<TEXT>\n<pre>  kept  </pre> <textarea> </textarea>\n</TEXT>\n"
    "</DOC>\n"
)


def test_tricky_fixture_equals_trecdocs(tmp_path: Path) -> None:
    path = tmp_path / "tricky.trec"
    path.write_text(TRICKY, encoding="utf-8")
    expected = reference(path)
    assert len(expected) == 10
    assert ours(path) == expected
    ids = [doc_id for doc_id, _ in expected]
    assert ids[0] == "FT911-1" and ids[3] == "TABS-AND-SPACES"


def test_gzip_and_directories_equal_trecdocs_per_file(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    first = tmp_path / "a.trec"
    first.write_text(TRICKY, encoding="utf-8")
    second = tmp_path / "sub" / "b.trec.gz"
    with gzip.open(second, "wt", encoding="utf-8") as out:
        out.write("<DOC>\n<DOCNO>Z1</DOCNO>\n<TEXT>\nzipped &amp; fine\n</TEXT>\n</DOC>\n")
    (tmp_path / ".hidden").write_text("<DOC>\n<DOCNO>H</DOCNO>\n</DOC>\n", encoding="utf-8")
    gz_reference = [(d.doc_id, d.text) for d in TrecDocs(_LocalFile(tmp_path))._docs_iter(second)]
    assert gz_reference == [("Z1", "\n\nzipped & fine\n\n")]
    assert ours(tmp_path) == reference(first) + gz_reference
    assert ours([second, first]) == gz_reference + reference(first)


def test_gzip_is_recognised_by_content_not_name(tmp_path: Path) -> None:
    # LongEval 2023-02 ships plain TREC files named .jsonl.gz
    plain = tmp_path / "part.jsonl.gz"
    plain.write_text("<DOC>\n<DOCNO>1</DOCNO>\n<TEXT>\nplain\n</TEXT>\n</DOC>\n", encoding="utf-8")
    zipped = tmp_path / "part.trec"
    zipped.write_bytes(gzip.compress(plain.read_bytes()))
    assert ours(plain) == ours(zipped) == [("1", "\n\nplain\n\n")]


PIECES = [
    "word", " ", "\n", "\n\n", "  ", "\t", "&amp;", "&lt;", "&nbsp;", "&foo;", "&#233;", "R&D",
    "<b>", "</b>", "<p>", "<script>x</script>", "<!-- c -->", "<TEXT>", "</TEXT>", "<TITLE>",
    "</TITLE>", "\r", "\r\n", "\x0c", "\u2028", "\x85", "é", "<", ">", "\n<TEXT>\n", "\n</TEXT>\n",
    "\n<HL>\n", "\n</HL>\n", "\n<DATE>x</DATE>\n", "\n<HEAD>\n", "\n</HEAD>\n", "\x00",
    "<pre>  </pre>", "\n<TEXT>x</TEXT>\n", "\n<LP>\n", "\n</LP>\n",
]


PLAIN = ["word", " ", "\n", "\n\n", "\t", "é", ">", "  ", "x\ny"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_markup_equals_trecdocs(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    for trial in range(60):
        docs = []
        for i in range(rng.randint(1, 5)):
            body = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 25)))
            if rng.random() < 0.5:  # free-form lines
                docs.append(f"<DOC>\n<DOCNO> d{i} </DOCNO>\n{body}\n</DOC>\n")
            else:  # the common <DOC>/<DOCNO>/<TEXT> shape, often with plain text only
                if rng.random() < 0.5:
                    body = "".join(rng.choice(PLAIN) for _ in range(rng.randint(0, 25)))
                docs.append(f"<DOC>\n<DOCNO>d{i}</DOCNO>\n<TEXT>\n{body}\n</TEXT>\n</DOC>\n")
        path = tmp_path / f"f{trial}.trec"
        path.write_text("".join(docs), encoding="utf-8")
        assert ours(path) == reference(path), "".join(docs)


def test_plain_documents_skip_the_html_parser() -> None:
    # the speed of the reader rests on these paths; they must agree with BeautifulSoup
    state = FileState()
    doc = "<DOC>\n<DOCNO> 42 </DOCNO>\n<TEXT>\nsome text\nmore\n</TEXT>\n"
    assert _canonical(doc, state) == DocumentRecord("42", "\n\nsome text\nmore\n\n")
    markup = "<TEXT>\n  plain text, no markup\n\nsecond paragraph \n</TEXT>\n<LP>\nlead\n</LP>\n"
    assert _plain_text(markup) is not None
    from bs4 import BeautifulSoup

    wrapped = f"<OUTER>\n{markup}\n</OUTER>"
    assert markup_text(markup) == BeautifulSoup(wrapped, "lxml").get_text()
    assert _plain_text("<TEXT>\na &amp; b\n</TEXT>\n") is None


def test_blocks_larger_than_the_read_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tcdb.collections.documents.trec as module

    monkeypatch.setattr(module, "_BLOCK_SIZE", 64)
    path = tmp_path / "many.trec"
    body = "".join(
        f"<DOC>\n<DOCNO>D{i}</DOCNO>\n<TEXT>\nété numéro {i} {'x' * (i * 7)}\n</TEXT>\n</DOC>\n"
        for i in range(40)
    )
    path.write_text(body, encoding="utf-8")
    assert ours(path) == reference(path)


def test_document_without_docno_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.trec"
    path.write_text(
        "<DOC>\n<DOCNO>1</DOCNO>\n<TEXT>\nok\n</TEXT>\n</DOC>\n\n"
        "<DOC>\n<TEXT>\nno id\n</TEXT>\n</DOC>\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError) as info:
        ours(path)
    assert info.value.file == str(path)
    assert info.value.line == 8
    assert info.value.reason == "document without <DOCNO>"


def test_undecodable_bytes_name_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.trec"
    path.write_bytes(b"<DOC>\n<DOCNO>1</DOCNO>\n<TEXT>\n\n caf\xe9\n</TEXT>\n</DOC>\n")
    with pytest.raises(InputError) as info:
        ours(path)
    assert info.value.line == 5
    assert "UTF-8" in info.value.reason


GOOD = "<DOC>\n<DOCNO>é{i}</DOCNO>\n<TEXT>\nété, numéro {i}\n</TEXT>\n</DOC>\n"  # 6 lines


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize(
    ("bad", "line", "reason"),
    [
        (b"<DOC>\n<TEXT>\nno id\n</TEXT>\n</DOC>\n", 61, "document without <DOCNO>"),
        (b"<DOC>\n<DOCNO>x</DOCNO>\n<TEXT>\ncaf\xe9\n</TEXT>\n</DOC>\n", 64, "not valid UTF-8"),
        (b"<DOC>\n<DOCNO>x</DOCNO>\n<TEXT>\ncut", 61, "not closed"),
    ],
)
def test_errors_past_the_first_read_name_their_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, packed: bool, bad: bytes, line: int,
    reason: str,
) -> None:
    # reads of 16 bytes cut lines and characters; the line is found by reading the file again
    import tcdb.collections.documents.trec as module

    monkeypatch.setattr(module, "_BLOCK_SIZE", 16)
    data = "".join(GOOD.format(i=i) for i in range(10)).encode() + bad
    path = tmp_path / "docs.trec"
    path.write_bytes(gzip.compress(data) if packed else data)
    with pytest.raises(InputError) as info:
        ours(path)
    assert (info.value.line, info.value.file) == (line, str(path))
    assert reason in info.value.reason


def test_truncated_last_document_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "truncated.trec"
    path.write_text(
        "<DOC>\n<DOCNO>1</DOCNO>\n</DOC>\n<DOC>\n<DOCNO>2</DOCNO>\n<TEXT>\ncut", encoding="utf-8"
    )
    with pytest.raises(InputError) as info:
        ours(path)
    assert info.value.line == 4
    assert "not closed" in info.value.reason


def test_missing_path_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        ours(tmp_path / "nope")
    assert info.value.file == str(tmp_path / "nope")
