"""Topic ids in the order people expect: numeric ids numerically ("2" before "10"), then the
others in text order. Every listing of topics sorts with `natural_key`."""

from __future__ import annotations

from typing import Any


def natural_key(value: Any) -> tuple[int, int, str]:
    """Sort key: (0, number, "") for a numeric id, (1, 0, text) for any other."""
    text = str(value)
    return (0, int(text), "") if text.isdigit() else (1, 0, text)
