"""Model identity commands."""

from typing import Annotated

import typer

from evalhouse.cli._common import JsonFlag, emit_json, out


def resolve(
    name: Annotated[str, typer.Argument(help="A model name as any source writes it, e.g. 'GPT-5 (high)'.")],
    source: Annotated[
        str | None, typer.Option("--source", "-s", help="The source key; generic names are scoped to it.")
    ] = None,
    developer: Annotated[str | None, typer.Option(help="The developer the source states, if any.")] = None,
    source_id: Annotated[
        str | None,
        typer.Option("--id", help="The source's own id beside a display name (AA: openai/gpt-4o-2024-08-06)."),
    ] = None,
    released: Annotated[str | None, typer.Option(help="The release date the source states (YYYY-MM-DD).")] = None,
    observed: Annotated[
        str | None, typer.Option(help="The day the source ran the model (YYYY-MM-DD): which snapshot an alias meant.")
    ] = None,
    json_out: JsonFlag = False,
) -> None:
    """Resolve a name to configuration, base model and family, with the configuration's flags.

    Works for any name, in the warehouse or not: the rules are paper 002's name collapse (org
    prefix, dates, effort phrases and generic tokens dropped; tier tokens such as Opus, Mini and
    Flash kept; a bare 3 or 4 in a Claude or GPT name is a version) and paper 000's stripping of
    reasoning, effort and preview suffixes. Generic names ('Ours', 'Baseline') stay scoped to
    their source. Dates come out ISO with their precision (2024-08-06, 2024-08, --05-28 while no
    evidence gives the year); --id, --released and --observed give the evidence a source states
    (docs/model-identity.md). E.g. 'evalhouse models resolve gpt-5-2025-08-07_high --json',
    "evalhouse models resolve \"GPT-4o (Aug '24)\" --id openai/gpt-4o-2024-08-06", 'evalhouse
    models resolve gpt-4o --observed 2024-09-01'.
    """
    from evalhouse.app import resolve_model
    from evalhouse.errors import InputError

    try:
        data = resolve_model(name, source, developer, source_id=source_id, released=released, observed=observed or None)
    except InputError as exc:
        raise typer.BadParameter(str(exc)) from exc
    if json_out:
        emit_json(data)
        return
    for key in ("input", "source", "configuration", "base_model", "family"):
        out.print(f"{key:>13}: {data[key]}", highlight=False)
    flags = ", ".join(f"{k}={v}" for k, v in data["flags"].items() if v not in (None, False))
    out.print(f"{'flags':>13}: {flags or '-'}", highlight=False)
    if data["setup"]:
        out.print(f"{'setup':>13}: {', '.join(f'{k}={v}' for k, v in data['setup'].items())}", highlight=False)
    for link in data["links"]:
        to = " | ".join(link["configurations"])
        evidence = f" ({link['evidence']})" if link["evidence"] else ""
        out.print(f"{link['kind']:>13}: {link['rule']} -> {to}{evidence}", highlight=False)


def register(app: typer.Typer) -> None:
    models = typer.Typer(help="Model identity: configuration -> base model -> family.", no_args_is_help=True)
    models.command("resolve")(resolve)
    app.add_typer(models, name="models")
