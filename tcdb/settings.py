"""Settings from the environment (and a `.env` file): where the database is, where data goes.

Every `TCDB_*` setting is a field of `Settings`, read and checked here and nowhere else: a bad
value is one line naming the variable, its value and what it accepts (`TCDB_READERS='abc': a
whole number ≥ 1`), and a variable one typo away from a setting (`TCDB_READRES`) is refused
rather than ignored.
"""

from __future__ import annotations

import difflib
import os
import re
from functools import lru_cache
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, BeforeValidator, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_DATABASE_URL = "sqlite:///tcdb.sqlite"
PREFIX = "TCDB_"
# Dask's own address schemes (distributed.comm): a bare `host:port` is tcp.
DASK_SCHEMES = ("tcp", "tls", "ucx", "inproc", "ws", "wss")
DASK_ADDRESS_FORM = "`local`, or a scheduler's address such as tcp://host:8786"


def dask_address(value: str) -> str:
    """`local`, or a Dask scheduler's address with its port (`host:8786` is tcp://host:8786);
    anything else is refused before a cluster is looked for."""
    text = value.strip()
    if text == "local":
        return text
    if "://" not in text:
        text = f"tcp://{text}"
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        port = None
        parts = None
    if parts is None or parts.scheme not in DASK_SCHEMES or not parts.hostname \
            or (port is None and parts.scheme != "inproc") or parts.path not in ("", "/"):
        raise ValueError(f"must be {DASK_ADDRESS_FORM}")
    return text


DaskAddress = Annotated[str, AfterValidator(dask_address)]


def _reader(value: Any) -> Any:
    """`TCDB_READER` in any case (`Thread`); empty is `auto`."""
    return (value.strip().lower() or "auto") if isinstance(value, str) else value


class Settings(BaseSettings):
    """`TCDB_DATABASE_URL` picks the store: SQLite in a file (default) or PostgreSQL (psycopg 3)."""

    model_config = SettingsConfigDict(env_prefix=PREFIX, env_file=".env", extra="ignore")

    database_url: str = Field(default=DEFAULT_DATABASE_URL)
    echo_sql: bool = False
    # What one compressed input file may expand to (`TCDB_MAX_EXPANDED_BYTES`), and, beyond its
    # first 64 MiB, how many times its compressed size (`TCDB_MAX_EXPANSION_RATIO`): real text
    # compresses 3-20 times, a decompression bomb a thousand. Past either it is refused.
    max_expanded_bytes: int = Field(default=64 << 30, gt=0)
    max_expansion_ratio: int = Field(default=100, gt=0)
    # What one line of an input file read line by line may hold (`TCDB_MAX_LINE_BYTES`): a JSONL
    # document is one line, and web pages reach a few MiB.
    max_line_bytes: int = Field(default=16 << 20, gt=0)
    # The Dask scheduler the evaluate flow scores runs on (`TCDB_DASK_ADDRESS`:
    # `tcp://host:8786`, or `local` for a local cluster); unset, the flow scores in-process.
    dask_address: DaskAddress | None = None
    # How file readers run (`TCDB_READER`): in a forked process where that is safe (`auto`),
    # always in a process, or in a thread; and how many reader processes read a source of
    # several parts at once (`TCDB_READERS`; unset, the cores but two, at most 4).
    reader: Annotated[Literal["auto", "process", "thread"], BeforeValidator(_reader)] = "auto"
    readers: int | None = Field(default=None, ge=1)


def get_settings() -> Settings:
    """The settings, re-read whenever the environment variables they come from change."""
    return _settings(tuple(sorted((k, v) for k, v in os.environ.items()
                                  if k.upper().startswith(PREFIX))))


@lru_cache(maxsize=8)
def _settings(variables: tuple[tuple[str, str], ...]) -> Settings:
    """Cached per value of the variables, so a changed variable is never missed. A bad value
    is one line naming its variable, the value and what it accepts."""
    from pydantic import ValidationError

    from tcdb.errors import TcdbError

    names = [PREFIX + name.upper() for name in Settings.model_fields]
    for variable, _ in variables:
        close = difflib.get_close_matches(variable.upper(), names, n=1, cutoff=0.9)
        if variable.upper() not in names and close:
            raise TcdbError(f"{variable} is not a tcdb setting: did you mean {close[0]}? "
                            f"(the settings are {', '.join(names)})")
    try:
        return Settings()
    except ValidationError as exc:
        problem = exc.errors()[0]
        name = PREFIX + str(problem["loc"][0]).upper() if problem["loc"] else PREFIX + "*"
        raise TcdbError(f"{name}={_shown(problem.get('input'))}: {_accepts(problem)}") \
            from None


def _shown(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 80 else f"{text[:80]}… ({len(text)} characters)"


def _accepts(problem: Any) -> str:
    """What a setting accepts, from pydantic's error: `a whole number ≥ 1`."""
    kind, context = problem["type"], problem.get("ctx") or {}
    if kind in ("int_parsing", "int_type", "int_from_float"):
        field = Settings.model_fields.get(str(problem["loc"][0]) if problem["loc"] else "")
        bounds = [f" ≥ {m.ge}" if hasattr(m, "ge") else f" > {m.gt}"
                  for m in (field.metadata if field else [])
                  if hasattr(m, "ge") or hasattr(m, "gt")]
        return "must be a whole number" + "".join(bounds)
    if kind == "greater_than_equal":
        return f"must be a whole number ≥ {context.get('ge')}"
    if kind == "greater_than":
        return f"must be a whole number > {context.get('gt')}"
    if kind in ("bool_parsing", "bool_type"):
        return "must be true or false (1/0, yes/no, on/off)"
    message = re.sub(r"^Value error, ", "", str(problem["msg"]))
    return re.sub(r"^Input should be", "must be", message)
