"""`tcdb db …`: create and migrate the schema."""

from __future__ import annotations

import typer

from tcdb.cli.output import console, tick

app = typer.Typer(help="Create and migrate the database schema (Alembic).", no_args_is_help=True)


@app.command()
def upgrade(revision: str = typer.Argument("head", help="Target revision.")) -> None:
    """Bring the database to the latest schema (creates it on first use)."""
    from tcdb.storage import migrate
    from tcdb.storage.db import get_engine, mask_url

    migrate.upgrade(revision=revision)
    engine = get_engine()
    console.print(tick(f"{mask_url(str(engine.url))} is at revision "
                       f"{migrate.current_revision(engine)}"))


@app.command()
def downgrade(
    revision: str = typer.Argument(..., help="Target revision, e.g. `base` or -1."),
) -> None:
    """Take the schema back to an older revision."""
    from tcdb.storage import migrate
    from tcdb.storage.db import get_engine

    migrate.downgrade(revision)
    console.print(f"schema now at {migrate.current_revision(get_engine()) or 'base (empty)'}")


@app.command()
def current() -> None:
    """Print the database's schema revision and the one this tcdb expects."""
    from tcdb.storage import migrate
    from tcdb.storage.db import get_engine
    from tcdb.storage.guard import known_revisions

    rev = migrate.current_revision(get_engine())
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
    from tcdb.cli.derive import fields_as_flags
    from tcdb.storage.roles import grant_readonly as grant

    with fields_as_flags(role="ROLE"):
        statements = grant(role, password)
    for statement in statements:
        console.print(statement, highlight=False, markup=False)
    console.print(f"role {role} can read tcdb's tables and change nothing; use it as "
                  f"postgresql+psycopg://{role}@HOST/DB", highlight=False, markup=False)


@app.command()
def check(json_output: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Check what no constraint enforces: orphan rows, stored counts, unfinished snapshots.

    Exits 1 when anything is found, so a script or a cron job can tell.
    """
    from tcdb.cli.output import print_json, print_table
    from tcdb.storage.consistency import check_database
    from tcdb.storage.db import get_engine, mask_url

    findings = check_database()
    if json_output:
        print_json({"database": mask_url(str(get_engine().url)), "consistent": not findings,
                    "findings": [f.as_dict() for f in findings]})
    elif findings:
        print_table(["table", "problem", "rows", "example"],
                    [(f.table, f.problem, f.count, f.example) for f in findings],
                    title=f"{len(findings)} inconsistencies")
    else:
        console.print(f"{mask_url(str(get_engine().url))} is consistent", highlight=False,
                      markup=False)
    if findings:
        raise typer.Exit(1)
