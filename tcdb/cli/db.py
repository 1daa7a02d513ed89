"""`tcdb db …`: create and migrate the schema."""

from __future__ import annotations

import typer

from tcdb.cli.commands import summary
from tcdb.cli.output import console, tick

app = typer.Typer(help=summary("db"), no_args_is_help=True)


@app.command()
def upgrade(revision: str = typer.Argument("head", help="Target revision.")) -> None:
    """Bring the database to the latest schema (creates it on first use)."""
    from tcdb.cli.database import cli_database
    from tcdb.storage import migrate

    db = cli_database()
    migrate.upgrade(db.url, revision=revision)
    console.print(tick(f"{db.shown} is at revision {migrate.current_revision(db.engine())}"))


@app.command()
def downgrade(
    revision: str = typer.Argument(..., help="Target revision, e.g. `base` or -1."),
) -> None:
    """Take the schema back to an older revision."""
    from tcdb.cli.database import cli_database
    from tcdb.storage import migrate

    db = cli_database()
    migrate.downgrade(revision, db.url)
    console.print(f"schema now at {migrate.current_revision(db.engine()) or 'base (empty)'}")


@app.command()
def current() -> None:
    """Print the database's schema revision and the one this tcdb expects."""
    from tcdb.cli.database import cli_database
    from tcdb.storage import migrate
    from tcdb.storage.guard import known_revisions

    rev = migrate.current_revision(cli_database().engine())
    head = migrate.head_revision()
    state = ("up to date" if rev == head else
             "newer than this tcdb: upgrade tcdb" if rev and rev not in known_revisions() else
             "run `tcdb db upgrade`")
    console.print(f"current: {rev or 'none'}  head: {head}  ({state})")


@app.command("grant-readonly")
def grant_readonly(
    role: str = typer.Argument(..., help="Role to create or grant (PostgreSQL)."),
    password: str | None = typer.Option(None, "--password", metavar="TEXT",
                                        help="Set the role's password."),
) -> None:
    """Give a role SELECT only, for the dashboard and the reports (PostgreSQL)."""
    from tcdb.cli.database import cli_database
    from tcdb.cli.derive import fields_as_flags
    from tcdb.storage.roles import grant_readonly as grant

    with fields_as_flags(role="ROLE"):
        statements = grant(role, password, cli_database().url)
    for statement in statements:
        console.print(statement, highlight=False, markup=False)
    console.print(f"role {role} can read tcdb's tables and change nothing; use it as "
                  f"postgresql+psycopg://{role}@HOST/DB", highlight=False, markup=False)


@app.command()
def check(json_output: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Check what no constraint enforces: orphan rows, stored counts, unfinished snapshots.

    Exits 1 when anything is found, so a script or a cron job can tell.
    """
    from tcdb.cli.database import cli_database
    from tcdb.cli.output import print_json, print_table
    from tcdb.storage.consistency import check_database
    from tcdb.storage.db import database_faults

    db = cli_database()
    with database_faults(db.url):  # a fault names this database, not the configured one
        findings = check_database(db.url)
    if json_output:
        print_json({"database": db.shown, "consistent": not findings,
                    "findings": [f.as_dict() for f in findings]})
    elif findings:
        print_table(["table", "problem", "rows", "example"],
                    [(f.table, f.problem, f.count, f.example) for f in findings],
                    title=f"{len(findings)} inconsistencies")
    else:
        console.print(f"{db.shown} is consistent", highlight=False,
                      markup=False)
    if findings:
        raise typer.Exit(1)
