"""Topic ids in the order people expect: numeric ids numerically ("2" before "10"), then the
others in text order. Every listing of topics sorts with `natural_key`."""

from __future__ import annotations

import re
from typing import Any


def natural_key(value: Any) -> tuple[int, int, str]:
    """Sort key: (0, number, "") for a numeric id, (1, 0, text) for any other."""
    text = str(value)
    return (0, int(text), "") if text.isdigit() else (1, 0, text)


def version_key(value: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key of a version label, runs of digits compared as numbers: v2 < v10, and
    LongEval's timestamps (2025-05-20-23-07-55) in time order."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part)
                 for part in re.split(r"(\d+)", value) if part)
