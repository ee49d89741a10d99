"""Curation commands: release dates, conflict policy, quarantine."""

from typing import Annotated, Any

import typer
from rich.table import Table

from evalhouse.cli._common import DbOption, JsonFlag, console, emit_json, guard, house, out, usage_error

POLICY_NAMES = ("prefer-independent", "prefer-first-party", "prefer-tier", "mean", "latest")


def dates(
    ctx: typer.Context,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Base model, configuration or source name.")
    ] = None,
    correct: Annotated[
        str | None,
        typer.Option(help="Add a manual correction: the release date YYYY-MM-DD (needs --reason)."),
    ] = None,
    reason: Annotated[str | None, typer.Option(help="Why the correction is right (kept with it).")] = None,
    precision: Annotated[str, typer.Option(help="Precision of --correct: day, month or year.")] = "day",
    url: Annotated[str | None, typer.Option(help="Where the corrected date can be checked.")] = None,
    conflicts: Annotated[bool, typer.Option("--conflicts", help="List base models whose evidence disagrees.")] = False,
    db: DbOption = None,
    json_out: JsonFlag = False,
) -> None:
    """Release-date evidence for a model and the date chosen from it.

    Every claim (aggregator field, date in the name, paper, web page, HF repo creation as a lower
    bound, ...) is an evidence row with its kind, url and raw sha256; the chosen date follows the
    precedence in registries/evidence_kinds.yaml. A correction is a new evidence row with a
    reason, never an overwrite: 'evalhouse dates --model "GPT-5" --correct 2025-08-07 --reason ...'.
    Exit 2 when the model is unknown or ambiguous (for --correct) or the date is malformed.
    """
    if not conflicts and model is None:
        usage_error("give --model NAME (or --conflicts)")
    where = house(ctx, db)
    with guard():
        if conflicts:
            rows = where.release_date_conflicts()
            if json_out:
                emit_json(rows)
            else:
                _print_conflicts(rows)
            return
        assert model is not None
        if correct is not None:
            report = where.correct_release_date(model, correct, reason=reason or "", precision=precision, url=url)
        else:
            report = where.release_dates(model)
    if json_out:
        emit_json(report)
    else:
        _print_dates(report)


def _print_conflicts(rows: list[dict[str, Any]]) -> None:
    for r in rows:
        span = f"{r['earliest']} .. {r['latest']}"
        out.print(f"{r['base_model_id']}: {span} (chose {r['release_date']}, {r['kind']})", highlight=False)
    out.print(f"{len(rows)} base model(s) whose claims about one configuration (or itself) disagree by > 31 days")


def _choice_text(choice: dict[str, Any] | None) -> str:
    if not choice or choice.get("release_date") is None:
        return "no evidence"
    flags = [choice["precision"], choice["kind"], choice.get("verification") or ""]
    if choice.get("level") == "base model":
        flags.append("from its base model")
    if choice.get("conflict"):
        flags.append("CONFLICT")
    elif choice.get("corrected"):
        flags.append("conflict resolved by a verified correction")
    return f"{choice['release_date']} ({', '.join(f for f in flags if f)})"


def _evidence_table(title: str, rows: list[dict[str, Any]]) -> Table:
    table = Table(title=title, title_justify="left")
    for col in (
        "date",
        "precision",
        "kind",
        "rank",
        "lower bound",
        "verification",
        "source",
        "configuration",
        "url / reason",
    ):
        table.add_column(col)
    for e in rows:
        table.add_row(
            str(e["date"]),
            e["precision"],
            e["kind"],
            str(e["rank"]),
            str(e["lower_bound"]),
            e["verification"],
            str(e["source_key"] or ""),
            str(e["config_id"] or "(base model)"),
            str(e["url"] or e["reason"] or ""),
        )
    return table


def _print_dates(report: list[dict[str, Any]]) -> None:
    """The configuration's own date and evidence first, then its base model's."""
    for item in report:
        for config in item.get("configurations", []):
            title = f"configuration {config['config_id']}: {_choice_text(config['chosen'])}"
            out.print(_evidence_table(title, config["evidence"]), highlight=False)
        title = f"base model {item['base_model']}: {_choice_text(item['chosen'])}"
        out.print(_evidence_table(title, item["evidence"]), highlight=False)


def policy(
    ctx: typer.Context,
    name: Annotated[
        str | None, typer.Argument(help=f"One of: {', '.join(POLICY_NAMES)}. Omit to show the current one.")
    ] = None,
    reason: Annotated[str | None, typer.Option(help="Why (recorded with the change).")] = None,
    db: DbOption = None,
    json_out: JsonFlag = False,
) -> None:
    """Show or set the conflict policy the canonical scores view applies.

    prefer-independent (default) never averages a developer-reported number with an independent
    one; prefer-first-party, prefer-tier, mean (paper 002) and latest are the alternatives.
    An unknown policy name exits 2.
    """
    where = house(ctx, db)
    with guard():
        data = where.conflict_policy() if name is None else where.set_conflict_policy(name, reason=reason)
    if json_out:
        emit_json(data)
    else:
        out.print(f"conflict policy: {data['policy']} (since {data['updated_at']}: {data['reason']})", highlight=False)


def setup_policy(json_out: JsonFlag = False) -> None:
    """Which setup fields define a cell and which are attributes of a candidate, each with its reason.

    A cell is model configuration x benchmark x subset x metric x metric parameters x the setup
    fields marked 'defines' (shots, chain of thought, pass@k, subset, judge, agent scaffold, edit
    format, effort ...): results that differ in one of them are different measurements. Fields
    marked 'attribute' (the harness, its version) say who or what produced a candidate: results
    that differ only in those share a cell, and their spread is the disagreement. 'outcome' fields
    (rank, cost) are not setup at all. A field the policy does not name defines the cell. The
    policy is evalhouse/curation/registries/setup_policy.yaml; a change to it re-derives the
    cells of existing warehouses (see docs/curation-rules.md).
    """
    from evalhouse.app import setup_policy as policy_of

    data = policy_of().as_dict()
    if json_out:
        emit_json(data)
        return
    out.print(f"setup policy v{data['version']} ({data['file']})", highlight=False)
    for role, title in (("defines", "define a cell"), ("attribute", "attributes of a candidate"),
                        ("outcome", "how a run went: not setup")):  # fmt: skip
        table = Table(title=f"fields that {title}" if role != "outcome" else f"fields that say {title}",
                      title_justify="left")  # fmt: skip
        for col in ("field", "also written", "reason"):
            table.add_column(col, overflow="fold")
        for f in data["fields"]:
            if f["role"] == role:
                table.add_row(f["field"], ", ".join(f["aliases"]), f["reason"])
        out.print(table)
    unlisted = data["unlisted"]
    out.print(f"any other field: {unlisted['role']} ({unlisted['reason']})", highlight=False)


def benchmark_links(json_out: JsonFlag = False) -> None:
    """Benchmarks a source reports under its own namespace, linked to the registry's or kept apart.

    A 'same_as' link (checked on subset, split, metric and normalisation, with evidence) loads the
    namespaced benchmark's results as the registry benchmark, so they meet the other sources'; an
    'apart_from' entry says why two benchmarks of one name are different measurements ('evalhouse
    conflicts --model M --benchmark B' prints it). The file is
    evalhouse/curation/registries/benchmark_links.yaml.
    """
    from evalhouse.app import benchmark_links as links_of

    links = links_of()
    data = links.as_dict()
    if json_out:
        emit_json(data)
        return
    out.print(f"benchmark links v{data['version']} ({data['file']})", highlight=False)
    table = Table()
    for col in ("benchmark", "link", "registry benchmark", "checked / why"):
        table.add_column(col, overflow="fold")
    for link in links.links:
        kind = "same as" if link.same_as else "apart from"
        table.add_row(link.benchmark, kind, link.target, link.why())
    out.print(table)


def rederive(ctx: typer.Context, db: DbOption = None, json_out: JsonFlag = False) -> None:
    """Derive every stored score's configuration, benchmark and cell again under the current rules.

    After an edit to the setup policy, the benchmark links, the benchmark or metric registries or
    the name rules, this moves what changed in place, without fetching (one transaction): an
    evaluation whose model now resolves to another configuration, a score whose result now
    canonicalises to another benchmark or metric (its value scaled again from its raw value), a
    score whose setup now has another cell key. Each change is a curation decision
    (configuration_rederived, benchmark_rederived, cell_rederived). A result the rules would now
    refuse is left as it is and counted: 'evalhouse reparse --source S' quarantines it with the
    reason. Upgrading a warehouse to a new evalhouse does this by itself (a migration).
    """
    with guard():
        report = house(ctx, db).rederive()
    data = report.as_dict()
    if json_out:
        emit_json(data)
        return
    out.print(
        f"{data['evaluations']:,} evaluations and {data['scores_read']:,} scores read; moved: "
        f"{data['configurations']:,} evaluations to another configuration, {data['groups']:,} groups to another "
        f"benchmark or metric, {data['setups']:,} setups to another cell key ({data['scores_moved']:,} scores); "
        f"{data['refused']:,} scores the rules would now refuse left as they are; {data['decisions']:,} decisions",
        highlight=False,
    )


def quarantine_list(
    ctx: typer.Context,
    source: Annotated[str | None, typer.Option("--source", "-s", help="Only this source.")] = None,
    stage: Annotated[str | None, typer.Option(help="parse, validate, canonicalise or load.")] = None,
    limit: Annotated[int, typer.Option(help="At most this many rows.")] = 50,
    db: DbOption = None,
    json_out: JsonFlag = False,
) -> None:
    """Rows that could not be validated or mapped: where they came from and why.

    An unknown --source or --stage exits 2 with the closest known names.
    """
    with guard():
        report = house(ctx, db).quarantine(source=source, stage=stage, limit=limit)
    if json_out:
        emit_json(report)
        return
    for c in report["counts"]:
        console.print(f"{c['source']}: {c['n']} at {c['stage']}", highlight=False)
    table = Table(title="quarantine")
    for col in ("id", "source", "stage", "locator", "reason"):
        table.add_column(col, overflow="fold")
    for r in report["rows"]:
        table.add_row(str(r["quarantine_id"]), r["source_key"] or "", r["stage"], r["locator"], r["reason"])
    out.print(table)


def register(app: typer.Typer) -> None:
    app.command("dates")(dates)
    curate = typer.Typer(help="Curation settings and decisions.", no_args_is_help=True)
    curate.command("policy")(policy)
    curate.command("setup-policy")(setup_policy)
    curate.command("benchmark-links")(benchmark_links)
    curate.command("rederive")(rederive)
    app.add_typer(curate, name="curate")
    quarantine = typer.Typer(help="What was refused, with reasons and locators.", no_args_is_help=True)
    quarantine.command("list")(quarantine_list)
    app.add_typer(quarantine, name="quarantine")
