"""`tcdb topics set create|import|list`: named topic subsets that every report can be restricted
to, optionally derived for one model (an LLM's topics free of contamination). Each command is
derived from its operation (`tcdb.catalog.topic_sets`, `tcdb.catalog.contamination`)."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import typer

from tcdb.cli import derive
from tcdb.cli.commands import summary
from tcdb.cli.output import console, print_table
from tcdb.errors import OptionError

if TYPE_CHECKING:
    from tcdb.catalog.contamination import TopicSetImportResult
    from tcdb.catalog.topic_sets import TopicSetResult, TopicSetsResult

app = typer.Typer(help=summary("topics"), no_args_is_help=True)
set_app = typer.Typer(help="Create, import and list topic sets (core topics, curated subsets, "
                      "topics a model has not seen).",
                      no_args_is_help=True)
app.add_typer(set_app, name="set")

# `--core s2 s3`: click gives `--core` one value; the others arrive as extra arguments.
_EXTRA = [inspect.Parameter("extra", inspect.Parameter.KEYWORD_ONLY,
                            annotation=list[str] | None,
                            default=typer.Argument(None, hidden=True))]


def _core_values(fields: dict[str, Any], extras: dict[str, Any]) -> dict[str, Any]:
    """Snapshots listed after `--core` belong to it; other stray arguments are an error."""
    extra = extras.get("extra")
    core = list(fields["core"]) if fields.get("core") else None
    if extra:
        if core is None:
            raise OptionError("TOPICS", f"unexpected argument(s): {' '.join(extra)}")
        core = [*core, *extra]
    return {**fields, "core": core}


def _show_created(result: TopicSetResult, extra: list[str] | None = None) -> None:
    console.print(f"topic set {result.name}: {result.status} · {result.n_topics} topics",
                  highlight=False)


def _show_sets(result: TopicSetsResult) -> None:
    print_table(["collection", "name", "topics", "for model", "method", "description"],
                [(r.collection, r.name, r.n_topics, r.for_model or "–", r.method or "–",
                  r.description) for r in result.topic_sets])


def _show_imported(result: TopicSetImportResult) -> None:
    print_table(["set", "for model", "status", "clean topics", "seen topics"],
                [(s.name, s.for_model, s.status, s.n_topics, s.n_seen) for s in result.sets],
                title=f"{result.collection} / {result.snapshot} · contamination sets from "
                f"{result.file}")


set_app.command("create")(derive.command("topic_set_create", show=_show_created,
                                         extras=_EXTRA, prepare=_core_values))
set_app.command("list")(derive.command("topic_sets", show=_show_sets))
set_app.command("import")(derive.command("topic_set_import", show=_show_imported))
