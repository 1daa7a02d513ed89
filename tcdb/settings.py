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


def get_settings() -> Settings:
    """The settings, re-read whenever the environment variables they come from change."""
    return _settings(os.environ.get("TCDB_DATABASE_URL"), os.environ.get("TCDB_ECHO_SQL"))


@lru_cache(maxsize=8)
def _settings(_url: str | None, _echo: str | None) -> Settings:
    """Cached per value of the variables, so a changed variable is never missed."""
    return Settings()
