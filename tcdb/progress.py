"""Progress bars for long work (ingest, run import, evaluation, the demo): one rich bar on stderr.

The core shows progress itself because only it knows how far it is; it never imports the CLI.
Callers pass `enabled=False` when the output is for machines (`--json`, flows, tests), and the
bar then costs nothing; it stays away too when stderr is not a terminal.
"""

from __future__ import annotations

import time
from types import TracebackType
from typing import Any


class Progress:
    """`with Progress("importing runs", total=12) as bar: … bar.advance()`.

    `total=None` when the size is not known (the bar then counts). With a `unit` the bar shows
    the rate (`12,345 docs/s`). A `transient` bar disappears when done; a lasting one stays as a
    record of what was done and how fast.
    """

    def __init__(self, label: str, total: int | None = None, *, enabled: bool = True,
                 unit: str | None = None, transient: bool = True) -> None:
        self.label = label
        self.total = total
        self.enabled = enabled
        self.unit = unit
        self.transient = transient
        self.done = 0
        self._bar: Any = None
        self._task: Any = None
        self._started = 0.0

    def __enter__(self) -> Progress:
        if not self.enabled:
            return self
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import (
            Progress as RichProgress,
        )

        console = Console(stderr=True)
        if not console.is_terminal:  # a bar piped into a log is noise, not progress
            return self
        # a description names runs and snapshots: data, never markup
        columns: list[Any] = [TextColumn("{task.description}", markup=False), BarColumn(),
                              MofNCompleteColumn()]
        if self.unit:
            columns.append(TextColumn("{task.fields[rate]}", markup=False))
        columns += [TimeElapsedColumn(), TimeRemainingColumn()]
        self._bar = RichProgress(*columns, console=console,
                                 transient=self.transient)
        self._bar.start()
        self._task = self._bar.add_task(self.label, total=self.total, rate="")
        self._started = time.perf_counter()
        return self

    def set_total(self, total: int | None) -> None:
        """Give the size once it is known (counted after the bar started), for the ETA."""
        self.total = total
        if self._bar is not None:
            self._bar.update(self._task, total=total)

    def advance(self, n: int = 1, description: str | None = None) -> None:
        """Count `n` more done; optionally say what is being done now."""
        self.done += n
        if self._bar is None:
            return
        fields: dict[str, Any] = {}
        if self.unit:
            rate = self.done / max(time.perf_counter() - self._started, 1e-9)
            fields["rate"] = f"{rate:,.0f} {self.unit}/s"
        if description is not None:
            fields["description"] = f"{self.label}: {description}"
        self._bar.update(self._task, advance=n, **fields)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
