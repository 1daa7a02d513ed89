"""Prose a command prints (a warning, a summary line) wraps at spaces on a real terminal, as
tables do, and stays one whole line when piped: a terminal left to wrap it cuts words."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.builders import build_snapshot, write_documents, write_topics
from tests.test_terminal_tables import run_on_terminal, screen_text

WIDTH = 80
TOPICS = {"1": "Energy", "2": "energy", "3": "renewable energy sources in europe"}


def _ingest_argv(tmp_path: Path) -> list[str]:
    """An ingest of a snapshot whose topics 1 and 2 share a text under normalised matching:
    a warning of ~140 characters."""
    build_snapshot(tmp_path, "c", "s1", {"d1": "a text"}, {"9": "other"}, topic_identity="text")
    docs = write_documents(tmp_path / "s2" / "docs.trec", {"d1": "a text", "d2": "more"})
    topics = write_topics(tmp_path / "s2" / "topics.tsv", TOPICS)
    return [sys.executable, "-m", "tcdb", "snapshot", "ingest", "c", "s2", "--docs", str(docs),
            "--topics", str(topics)]


def test_a_warning_wraps_at_spaces_on_a_terminal_and_stays_whole_piped(
        db: str, tmp_path: Path) -> None:
    argv = _ingest_argv(tmp_path)
    screen = screen_text(run_on_terminal(WIDTH, argv))
    lines = screen.splitlines()
    start = next(i for i, line in enumerate(lines) if "warning:" in line)
    assert all(len(line) <= WIDTH for line in lines), screen
    # the warning continues over several lines, each cut at a space: every word whole
    wrapped = " ".join(line.strip() for line in lines[start:start + 3])
    assert "ambiguous query text 'energy' under normalised matching" in wrapped, screen
    assert len(lines[start]) > WIDTH - 20 and not lines[start].endswith("-"), screen
    words = re.findall(r"\S+", wrapped)
    assert all(w in wrapped.split() for w in words)
    # piped (a fresh snapshot label, same files): the warning is one line
    argv[argv.index("s2")] = "s3"
    piped = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    (warning,) = [line for line in piped.splitlines() if "warning:" in line]
    assert "ambiguous query text 'energy'" in warning and len(warning) > WIDTH, piped
