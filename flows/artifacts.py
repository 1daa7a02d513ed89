"""Markdown artifacts: each flow run leaves a short account of what it did (counts, drift, time).

The markdown is built by plain functions (tested without Prefect) and published with
`create_markdown_artifact` under a stable key, so the Prefect UI shows every version of, say,
`ingest-longeval-web` side by side.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tcdb.flows.common import Stopwatch


def artifact_key(*parts: str) -> str:
    """A key Prefect accepts: lowercase letters, digits and dashes."""
    key = "-".join(parts).lower()
    key = re.sub(r"[^a-z0-9-]+", "-", key)
    return re.sub(r"-{2,}", "-", key).strip("-") or "tcdb"


def _cell(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub-flavoured markdown table; '(none)' when there are no rows."""
    rows = list(rows)
    if not rows:
        return "_(none)_"
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def timings_section(watch: Stopwatch) -> str:
    rows = [(name, seconds) for name, seconds in watch.steps.items()]
    rows.append(("total", watch.total))
    return "### Timings (s)\n\n" + markdown_table(["step", "seconds"], rows)


def drift_section(drifts: Mapping[str, Mapping[str, Any] | None]) -> str:
    """One row per ingested snapshot: what changed since the snapshot before it."""
    rows = []
    for label, drift in drifts.items():
        if drift is None:
            rows.append((label, "(first)", None, None, None, None, None, None))
            continue
        docs, topics = drift["documents"], drift["topics"]
        rows.append((label, drift["previous"], docs["added"], docs["removed"], docs["changed"],
                     docs["unchanged"], topics["added"], topics["removed"]))
    columns = ["snapshot", "since", "docs +", "docs −", "docs changed", "docs unchanged",
               "topics +", "topics −"]
    return "### Drift\n\n" + markdown_table(columns, rows)


def render(title: str, sections: Iterable[str]) -> str:
    return f"## {title}\n\n" + "\n\n".join(s for s in sections if s) + "\n"


def publish(key: str, markdown: str, description: str) -> str:
    """Attach the markdown to the current flow run; returns it (also for the flow's result)."""
    from prefect.artifacts import create_markdown_artifact

    create_markdown_artifact(markdown=markdown, key=artifact_key(key), description=description)
    return markdown
