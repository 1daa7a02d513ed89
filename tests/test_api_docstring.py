"""The API's own docstring example runs as written, on both databases."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from tests.builders import build_snapshot, write_run_file


def _example() -> str:
    """The indented code block after the first `::`-free paragraph of `tcdb.api.__doc__`."""
    import tcdb.api

    doc = tcdb.api.__doc__ or ""
    block = re.search(r"\n\n((?:    .*\n)+)", doc)
    assert block, "tcdb.api's docstring has no example"
    return textwrap.dedent(block.group(1))


def test_the_docstring_example_runs(db: str, tmp_path: Path) -> None:
    from tcdb.api import run_import

    docs = {f"d{i}": f"text {i}" for i in range(4)}
    build_snapshot(tmp_path, "longeval-web", "2023-01", docs, {"1": "cheap flights"},
                   [("1", "d1", 1), ("1", "d2", 0)])
    run_import("longeval-web", "2023-01",
               [write_run_file(tmp_path / "run", "bm25", [("1", "d1", 2.0), ("1", "d3", 1.0)])])
    code = _example()
    assert "tcdb.api." in code
    namespace: dict[str, object] = {}
    exec(code, namespace)  # noqa: S102 - the docstring's example, as a reader would paste it
    frame = namespace["result"].to_frame()  # type: ignore[attr-defined]
    measures = set(frame["measure"])
    assert measures == {"nDCG@10", "AP"}
    # d1 is the one relevant document, ranked first: AP = 1 and nDCG@10 = 1 by hand
    assert set(frame["value"].round(4)) == {1.0}
