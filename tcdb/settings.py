"""Settings from the environment (and a `.env` file): where the database is, where data goes."""

from __future__ import annotations

import os
from functools import lru_cache

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_DATABASE_URL = "sqlite:///tcdb.sqlite"


class Settings(BaseSettings):
    """`TCDB_DATABASE_URL` picks the store: SQLite in a file (default) or PostgreSQL (psycopg 3)."""

    model_config = SettingsConfigDict(env_prefix="TCDB_", env_file=".env", extra="ignore")

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
    dask_address: str | None = None


def get_settings() -> Settings:
    """The settings, re-read whenever the environment variables they come from change."""
    return _settings(tuple(sorted((k, v) for k, v in os.environ.items()
                                  if k.upper().startswith("TCDB_"))))


@lru_cache(maxsize=8)
def _settings(_variables: tuple[tuple[str, str], ...]) -> Settings:
    """Cached per value of the variables, so a changed variable is never missed. A bad value
    is one line naming its variable (`TCDB_MAX_LINE_BYTES: input should be …`)."""
    from pydantic import ValidationError

    from tcdb.errors import TcdbError

    try:
        return Settings()
    except ValidationError as exc:
        problem = exc.errors()[0]
        name = "TCDB_" + str(problem["loc"][0]).upper() if problem["loc"] else "TCDB_*"
        raise TcdbError(f"{name}: {problem['msg'][:1].lower()}{problem['msg'][1:]}") from None
