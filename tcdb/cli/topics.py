"""`tcdb topics set create|import|list`: named topic subsets that every report can be restricted
to, optionally derived for one model (an LLM's topics free of contamination)."""

from __future__ import annotations

from pathlib import Path

import typer

from tcdb.cli.output import console, print_json, print_table

app = typer.Typer(help="Topics of a collection: named topic sets for restricting reports.",
                  no_args_is_help=True)
set_app = typer.Typer(help="Create, import and list topic sets (core topics, curated subsets, "
                      "topics a model has not seen).",
                      no_args_is_help=True)
app.add_typer(set_app, name="set")


@set_app.command("create")
def create(
    name: str = typer.Argument(..., help="Name of the topic set."),
    collection: str = typer.Argument(..., help="Collection name."),
    snapshot: str = typer.Argument(..., help="Snapshot whose topic ids the set is given in."),
    from_file: Path | None = typer.Option(
        None, "--from-file", help="File with one topic id per line (# starts a comment)."),
    core: list[str] | None = typer.Option(
        None, "--core", help="Topics SNAPSHOT shares with each of these snapshots (repeat, or "
        "list them after --core)."),
    description: str | None = typer.Option(None, "--description", help="Free text."),
    replace: bool = typer.Option(False, "--replace", help="Replace a set of that name."),
    for_model: str | None = typer.Option(
        None, "--for-model", help="The model the set was derived for (e.g. an LLM's name)."),
    method: str | None = typer.Option(
        None, "--method", help="How the topics were chosen (e.g. contamination-quiz; default: "
        "file, list or core of …)."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
    extra: list[str] | None = typer.Argument(None, hidden=True),
) -> None:
    """Create a topic set from a file of topic ids or as the core topics of snapshots."""
    from tcdb.catalog.topic_sets import create_topic_set
    from tcdb.errors import OptionError

    core = list(core) if core else None
    if extra:
        if core is None:
            raise OptionError("TOPICS", f"unexpected argument(s): {' '.join(extra)}")
        core = [*core, *extra]
    result = create_topic_set(collection, name, snapshot, from_file=from_file, core=core,
                              description=description, replace=replace,
                              for_model=for_model, method=method)
    if json_output:
        print_json(result)
        return
    console.print(f"topic set {result['name']}: {result['status']} · {result['n_topics']} "
                  "topics", highlight=False)


@set_app.command("list")
def list_(
    collection: str | None = typer.Argument(None, help="Only this collection."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """List topic sets with their sizes, the model each was derived for, and how."""
    from tcdb.catalog.topic_sets import list_topic_sets

    rows = list_topic_sets(collection)
    if json_output:
        print_json(rows)
        return
    print_table(["collection", "name", "topics", "for model", "method", "description"],
                [(r["collection"], r["name"], r["n_topics"], r["for_model"] or "–",
                  r["method"] or "–", r["description"]) for r in rows])


@set_app.command("import")
def import_(
    collection: str = typer.Argument(..., help="Collection name."),
    snapshot: str = typer.Argument(..., help="Snapshot whose topic ids the file uses."),
    file: Path = typer.Argument(..., help="TSV or CSV with a header: model, topic, score"
                                "[, threshold]."),
    threshold: float | None = typer.Option(
        None, "--threshold", help="Score at or above which a model has likely seen a topic, "
        "for rows without their own threshold."),
    prefix: str = typer.Option("clean", "--prefix", help="Sets are named PREFIX-MODEL."),
    replace: bool = typer.Option(False, "--replace", help="Replace sets of those names."),
    json_output: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """One topic set per model of a contamination file: the topics it has likely NOT seen."""
    from tcdb.catalog.contamination import import_contamination

    result = import_contamination(collection, snapshot, file, threshold=threshold,
                                  prefix=prefix, replace=replace)
    if json_output:
        print_json(result)
        return
    print_table(["set", "for model", "status", "clean topics", "seen topics"],
                [(r["name"], r["for_model"], r["status"], r["n_topics"], r["n_seen"])
                 for r in result["sets"]],
                title=f"{collection} / {snapshot} · contamination sets from {file}")
