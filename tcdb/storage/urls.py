"""Database URLs as people type them and as tcdb shows them (the password hidden)."""

from __future__ import annotations

import re

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError


def normalise_url(url: str) -> str:
    """Accept the URLs people type: `postgresql://` means psycopg 3 here."""
    if url.startswith("postgres://"):
        url = "postgresql://" + url[len("postgres://") :]
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://") :]
    return url


def mask_url(url: str) -> str:
    """The URL with its password hidden, for display."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return re.sub(r":[^:@/]+@", ":***@", url)
