"""The `snapshot_ingest` request: one source, a date that is a date; errors name the fields
(the API's parameters, the CLI's flags), before anything is read or written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tcdb.errors import FieldError


def test_a_snapshot_needs_exactly_one_source() -> None:
    from tcdb.ingest.snapshot import SnapshotIngestRequest

    with pytest.raises(FieldError) as info:
        SnapshotIngestRequest.of(collection="c", snapshot="s1")
    assert info.value.field == "irds/docs"
    assert str(info.value).startswith("irds/docs: give either irds (an ir_datasets id) or docs")
    with pytest.raises(FieldError) as info:
        SnapshotIngestRequest.of(collection="c", snapshot="s1", irds="x/y", docs="d")
    assert info.value.field == "irds/docs"
    with pytest.raises(FieldError) as info:
        SnapshotIngestRequest.of(collection="c", snapshot="s1", cocktail="f", qrels_file="q")
    assert info.value.field == "cocktail"


def test_the_date_is_a_date_field() -> None:
    from tcdb.ingest.snapshot import SnapshotIngestRequest

    with pytest.raises(FieldError) as info:
        SnapshotIngestRequest.of(collection="c", snapshot="s1", docs="d", date="2022-13-01")
    assert info.value.field == "date"
    request = SnapshotIngestRequest.of(collection="c", snapshot="s1", docs="d",
                                       date="2022-06-01")
    assert str(request.date) == "2022-06-01" and request.qrels == "original" and request.text


def test_the_cli_names_the_flags(cli: Any, db: str, tmp_path: Path) -> None:
    code, _, err = cli("snapshot", "ingest", "c", "s1")
    assert code == 1 and "--irds/--docs: give either irds" in err
    code, _, err = cli("snapshot", "ingest", "c", "s1", "--docs", tmp_path, "--date", "June")
    assert code == 1 and "--date:" in err
