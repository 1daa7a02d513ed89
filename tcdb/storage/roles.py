"""A read-only role on PostgreSQL for the dashboard and the reports.

The dashboard and report commands only read; giving them a role that can only SELECT makes
that a guarantee of the server, not a promise of the code. Default privileges cover the tables
later migrations create (they are created by the role that runs the migrations, which is the
role that runs this). SQLite has no roles: the dashboard opens its file read-only already.
"""

from __future__ import annotations

import re

from sqlalchemy import text

from tcdb.errors import FieldError
from tcdb.storage.db import configured_url, get_engine
from tcdb.storage.urls import mask_url

ROLE_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def grant_readonly(role: str, password: str | None = None, url: str | None = None) -> list[str]:
    """Create `role` (LOGIN, SELECT only) if missing and grant it read access to tcdb's tables;
    the SQL statements run, for the record. The same call again is a no-op."""
    if not ROLE_NAME.match(role):
        raise FieldError("role", f"{role!r} is not a plain role name (lower case letters, "
                         "digits and _)")
    engine = get_engine(url or configured_url())
    if engine.dialect.name != "postgresql":
        raise FieldError("database_url", f"{mask_url(str(engine.url))} is SQLite, which "
                         "has no roles: `tcdb dashboard` opens it read-only already")
    statements = []
    with engine.begin() as conn:
        database = conn.execute(text("SELECT current_database()")).scalar_one()
        exists = conn.execute(text("SELECT 1 FROM pg_roles WHERE rolname = :r"),
                              {"r": role}).first()
        if not exists:
            statements.append(f'CREATE ROLE "{role}" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE')
        if password is not None:
            quoted = password.replace("'", "''")
            statements.append(f"ALTER ROLE \"{role}\" PASSWORD '{quoted}'")
        statements += [
            f'GRANT CONNECT ON DATABASE "{database}" TO "{role}"',
            f'GRANT USAGE ON SCHEMA public TO "{role}"',
            f'GRANT SELECT ON ALL TABLES IN SCHEMA public TO "{role}"',
            f'ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO "{role}"',
        ]
        for statement in statements:
            conn.execute(text(statement))
    return [s if "PASSWORD" not in s else f'ALTER ROLE "{role}" PASSWORD …' for s in statements]
