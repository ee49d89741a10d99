"""Model identity commands."""

from __future__ import annotations

from typing import Annotated

import typer

from evalhouse.cli._common import JsonFlag, emit_json, out


def resolve(
    name: Annotated[str, typer.Argument(help="A model name as any source writes it, e.g. 'GPT-5 (high)'.")],
    source: Annotated[
        str | None, typer.Option("--source", "-s", help="The source key; generic names are scoped to it.")
    ] = None,
    developer: Annotated[str | None, typer.Option(help="The developer the source states, if any.")] = None,
    json_out: JsonFlag = False,
) -> None:
    """Resolve a name to configuration, base model and family, with the configuration's flags.

    Works for any name, in the warehouse or not: the rules are paper 002's name collapse (org
    prefix, dates, effort phrases and generic tokens dropped; tier tokens such as Opus, Mini and
    Flash kept; a bare 3 or 4 in a Claude or GPT name is a version) and paper 000's stripping of
    reasoning, effort and preview suffixes. Generic names ('Ours', 'Baseline') stay scoped to
    their source. E.g. 'evalhouse models resolve gpt-5-2025-08-07_high --json'.
    """
    from evalhouse.curation.identity import describe_name
    from evalhouse.curation.registry import load_registry

    data = describe_name(name, load_registry(), source=source, developer=developer)
    if json_out:
        emit_json(data)
        return
    for key in ("input", "source", "configuration", "base_model", "family"):
        out.print(f"{key:>13}: {data[key]}", highlight=False)
    flags = ", ".join(f"{k}={v}" for k, v in data["flags"].items() if v not in (None, False))
    out.print(f"{'flags':>13}: {flags or '-'}", highlight=False)


def register(app: typer.Typer) -> None:
    models = typer.Typer(help="Model identity: configuration -> base model -> family.", no_args_is_help=True)
    models.command("resolve")(resolve)
    app.add_typer(models, name="models")
