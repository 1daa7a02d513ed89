"""`tcdb dashboard`: the Streamlit dashboard on the current database, headless."""

from __future__ import annotations

import typer

from tcdb.cli.output import console

EVERY_INTERFACE = {"0.0.0.0", "::"}


def dashboard(
    port: int = typer.Option(8501, "--port", "-p", help="Port to serve on."),
    address: str = typer.Option("127.0.0.1", "--address",
                                help="Address to bind (0.0.0.0 to serve other machines)."),
) -> None:
    """Browse snapshot drift, persistence, reusability, pools and run comparisons."""
    from tcdb.cli.database import cli_database
    from tcdb.dashboard.launch import run_dashboard
    from tcdb.storage.urls import mask_url

    url = cli_database().url  # --database-url, else the configured one
    # 0.0.0.0 / :: listen on every interface (a container, a shared machine); not an address
    # a browser opens
    where = (f"http://localhost:{port} (listening on every interface)"
             if address in EVERY_INTERFACE else f"http://{address}:{port}")
    console.print(f"tcdb dashboard on {where} reading {mask_url(url)} (Ctrl-C stops it)",
                  highlight=False)
    code = run_dashboard(url, port, address)
    if code not in (0, -15):
        raise typer.Exit(code)
