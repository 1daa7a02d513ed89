"""`tcdb info`: where the database is, its schema revision and how much it holds."""

from __future__ import annotations

import typer

from tcdb.cli.output import console, print_json, print_table


def info(json_output: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Show the database URL (password masked), schema revision and row counts per table."""
    from sqlalchemy import func, select

    import tcdb.schema  # noqa: F401
    from tcdb import __version__
    from tcdb.cli.database import cli_database
    from tcdb.schema.base import metadata
    from tcdb.storage import migrate
    from tcdb.storage.db import database_faults
    from tcdb.storage.urls import mask_url

    # its first connection refuses a database not at the head revision
    db = cli_database()
    engine = db.engine()
    counts: dict[str, int] = {}
    with database_faults(db.url), engine.connect() as conn:
        for name, table in sorted(metadata.tables.items()):
            counts[name] = conn.execute(select(func.count()).select_from(table)).scalar_one()
    result = {
        "version": __version__,
        "database_url": mask_url(str(engine.url)),
        "backend": engine.dialect.name,
        "revision": migrate.current_revision(engine),
        "tables": counts,
    }
    if json_output:
        print_json(result)
        return
    console.print(f"tcdb {__version__} · {result['database_url']} · revision {result['revision']}")
    print_table(["table", "rows"], [(k, f"{v:,}") for k, v in counts.items()])
