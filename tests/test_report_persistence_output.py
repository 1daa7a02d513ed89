"""`tcdb report persistence` on a campaign's scale: `--system` to restrict it, a skipped list
summed up in one line (the full list in `--json`), output that ends where the report ends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.builders import build_snapshot


def _import_scores(tmp_path: Path, snapshot: str, tag: str, system: str,
                   values: dict[str, float]) -> None:
    from tcdb.api import scores_import

    path = tmp_path / f"{tag}.tsv"
    path.write_text("".join(f"{t}\tAP\t{v!r}\n" for t, v in values.items()))
    scores_import("campaign", snapshot, path, qrels="original", run=tag, system=system)


@pytest.fixture
def campaign(db: str, tmp_path: Path) -> Path:
    """Snapshots A and B; systems `p`, `s` and `t` in both, `late-0` … `late-5` in B only,
    `gone` in A only, `dup` with two runs in A."""
    for label in ("A", "B"):
        build_snapshot(tmp_path, "campaign", label, {"d0": "dummy"},
                       {"1": "one", "2": "two", "3": "three"}, [(t, "d0", 1) for t in "123"])
        for system, shift in (("p", 0.0), ("s", 0.1), ("t", 0.2)):
            _import_scores(tmp_path, label, f"{system}-{label}", system,
                           {"1": 0.2 + shift, "2": 0.4 + shift, "3": 0.3})
    for n in range(6):
        _import_scores(tmp_path, "B", f"late-{n}", f"late-{n}", {"1": 0.5})
    _import_scores(tmp_path, "A", "gone", "gone", {"2": 0.5})
    for tag, label in (("dup-1", "A"), ("dup-2", "A"), ("dup-b", "B")):
        _import_scores(tmp_path, label, tag, "dup", {"3": 0.1})
    return tmp_path


REPORT = ("report", "persistence", "campaign", "--snapshots", "A", "B", "--pivot", "p",
          "--measure", "AP")


def test_many_skipped_systems_are_one_line_and_json_lists_them_all(campaign: Path, cli) -> None:
    code, out, err = cli(*REPORT)
    assert code == 0, err
    skipped = [line for line in out.splitlines() if line.startswith("skipped")]
    assert skipped == [
        "skipped dup: 2 runs in snapshot 'A' (dup-1, dup-2)",  # a few: each with its reason
        "skipped 7 systems without a run in every snapshot (e.g. gone, late-0, late-1; "
        "--json lists them all)"]
    code, out, err = cli(*REPORT, "--json")
    assert code == 0, err
    listed = json.loads(out)["measures"]["AP"]["skipped"]
    assert sorted(e["system"] for e in listed) == ["dup", "gone"] + [f"late-{n}"
                                                                    for n in range(6)]
    assert {e["kind"] for e in listed} == {"no_run", "several_runs"}


def test_output_ends_with_the_report_not_blank_lines(campaign: Path, cli,
                                                    tmp_path: Path) -> None:
    for extra in ((), ("--bootstrap", "20"), ("--json",), ("--per-topic", tmp_path / "d.csv")):
        code, out, err = cli(*REPORT, *extra)
        assert code == 0, err
        assert out.endswith("\n") and not out.endswith("\n\n"), extra
        assert out.splitlines()[-1].strip(), extra  # the last line says something


def test_system_option_restricts_the_report_and_keeps_the_pivot(campaign: Path, cli) -> None:
    from tcdb.api import per_topic_deltas, persistence

    code, out, err = cli(*REPORT, "--system", "t", "--system", "gone", "--json")
    assert code == 0, err
    result = json.loads(out)["measures"]["AP"]
    assert [r["system"] for r in result["systems"]] == ["p", "t"]
    assert result["skipped"] == [{"system": "gone", "reason": "no run in snapshot 'B'",
                                  "kind": "no_run"}]
    code, out, err = cli(*REPORT, "--system", "s")
    assert code == 0, err
    first_words = {line.replace("│", " ").split()[0] for line in out.splitlines()
                   if line.replace("│", " ").strip()}  # boxed on a terminal, plain when piped
    assert "s" in first_words and "t" not in first_words and "skipped" not in out
    report = persistence("campaign", snapshots=["A", "B"], pivot="p", measures=["AP"],
                         systems=["s"])
    assert [r.system for r in report.measures["AP"].systems] == ["p", "s"]
    deltas = per_topic_deltas("campaign", snapshots=["A", "B"], pivot="p", measures=["AP"],
                              systems=["s"]).to_frame()
    assert set(deltas["system"]) == {"s"}


def test_unknown_system_names_a_few_known_ones(campaign: Path, cli) -> None:
    code, _, err = cli(*REPORT, "--system", "late")
    assert code == 1
    line = " ".join(err.split())
    assert "--system: no system 'late' has runs in snapshots A, B of 'campaign'" in line
    # the closest names first, then the others, at most eight and a count
    assert ("(systems: late-0, late-1, late-2, dup, gone, late-3, late-4, late-5 … and 3 more)"
            in line)
