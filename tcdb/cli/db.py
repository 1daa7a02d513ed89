"""`tcdb db …`: create and migrate the schema."""

from __future__ import annotations

import typer

from tcdb.cli.output import console

app = typer.Typer(help="Create and migrate the database schema (Alembic).", no_args_is_help=True)


@app.command()
def upgrade(revision: str = typer.Argument("head", help="Target revision.")) -> None:
    """Bring the database to the latest schema (creates it on first use)."""
    from tcdb import migrate
    from tcdb.db import get_engine, mask_url

    migrate.upgrade(revision=revision)
    engine = get_engine()
    console.print(f"[green]✓[/] {mask_url(str(engine.url))} is at revision "
                  f"{migrate.current_revision(engine)}")


@app.command()
def downgrade(
    revision: str = typer.Argument(..., help="Target revision, e.g. `base` or -1."),
) -> None:
    """Take the schema back to an older revision."""
    from tcdb import migrate
    from tcdb.db import get_engine

    migrate.downgrade(revision)
    console.print(f"schema now at {migrate.current_revision(get_engine()) or 'base (empty)'}")


@app.command()
def current() -> None:
    """Print the database's schema revision and the one this tcdb expects."""
    from tcdb import migrate
    from tcdb.db import get_engine

    rev = migrate.current_revision(get_engine())
    head = migrate.head_revision()
    state = "up to date" if rev == head else "run `tcdb db upgrade`"
    console.print(f"current: {rev or 'none'}  head: {head}  ({state})")
