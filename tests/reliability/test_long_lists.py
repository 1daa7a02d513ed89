"""A message that lists names from the data names a few and counts the rest: 5,000 unknown run
tags made one error line of 1,780 characters. One rule (`tcdb.errors.some`), on both
databases."""

from __future__ import annotations

import pytest

from tcdb.errors import SHOWN_NAMES, some
from tests.builders import Seeded


def test_some_names_a_few_and_counts_the_rest() -> None:
    assert some([]) == ""
    assert some(["a", "b"]) == "a, b"
    six = [f"r{i}" for i in range(SHOWN_NAMES + 1)]
    assert some(six) == ", ".join(six)  # "and 1 more" would say no less
    many = [f"r{i}" for i in range(5_000)]
    assert some(many) == "r0, r1, r2, r3, r4 and 4,995 more"


def test_five_thousand_unknown_runs_are_one_short_line(
    cli, seeded_url: tuple[str, Seeded], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, seeded = seeded_url
    monkeypatch.setenv("TCDB_DATABASE_URL", url)
    tags = [f"ghost-{i:04d}" for i in range(5_000)]
    args = [arg for tag in tags for arg in ("--run", tag)]
    code, _, err = cli("evaluate", seeded.collection, seeded.labels[0], "-m", "P@5", *args)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 1 and len(lines) == 1, err
    assert "'ghost-0000', 'ghost-0001'" in lines[0] and "and 4,995 more" in lines[0]
    assert "ghost-4999" not in lines[0] and len(lines[0]) < 400, len(lines[0])
