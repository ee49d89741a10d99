"""Curation commands: release dates, conflict policy, quarantine."""

from __future__ import annotations

from datetime import date
from typing import Annotated

import typer
from rich.table import Table

from evalhouse.cli._common import JsonFlag, console, db_path, emit_json, fail, out
from evalhouse.warehouse import release_dates
from evalhouse.warehouse.db import Warehouse, WarehouseError, first_row
from evalhouse.warehouse.decisions import POLICIES, set_policy


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
    json_out: JsonFlag = False,
) -> None:
    """Release-date evidence for a model and the date chosen from it.

    Every claim (aggregator field, date in the name, paper, web page, HF repo creation as a lower
    bound, ...) is an evidence row with its kind, url and raw sha256; the chosen date follows the
    precedence in registries/evidence_kinds.yaml. A correction is a new evidence row with a
    reason, never an overwrite: 'evalhouse dates --model "GPT-5" --correct 2025-08-07 --reason ...'.
    """
    path = db_path(ctx)
    try:
        with Warehouse.open(path, read_only=correct is None) as wh:
            if conflicts:
                rows = release_dates.conflicts(wh.con)
                if json_out:
                    emit_json(rows)
                else:
                    for r in rows:
                        span = f"{r['earliest']} .. {r['latest']}"
                        out.print(f"{r['base_model_id']}: {span} (chose {r['release_date']}, {r['kind']})")
                    out.print(f"{len(rows)} base model(s) with evidence more than a month apart")
                return
            if model is None:
                raise fail("give --model NAME (or --conflicts)")
            found = release_dates.find_base_models(wh.con, model)
            if not found:
                raise fail(f"no base model matches {model!r}")
            if correct is not None:
                if len(found) > 1:
                    raise fail(f"{model!r} matches several base models ({', '.join(found)}); name one")
                if not reason:
                    raise fail("a correction needs --reason")
                try:
                    with wh.transaction() as con:
                        release_dates.correct(
                            con,
                            found[0],
                            date.fromisoformat(correct),
                            reason=reason,
                            precision=precision,
                            url=url,
                        )  # type: ignore[arg-type]
                except ValueError as exc:
                    raise fail(str(exc)) from exc
            report = [
                {
                    "base_model": b,
                    "chosen": release_dates.chosen(wh.con, b),
                    "evidence": release_dates.evidence(wh.con, b),
                }
                for b in found
            ]
    except WarehouseError as exc:
        raise fail(str(exc)) from exc
    if json_out:
        emit_json(report)
        return
    for item in report:
        choice = item["chosen"]
        flag = ", CONFLICT" if choice and choice["conflict"] else ""
        title = f"{item['base_model']}: " + (
            f"{choice['release_date']} ({choice['precision']}, {choice['kind']}{flag})" if choice else "no evidence"
        )
        table = Table(title=title)
        for col in (
            "date",
            "precision",
            "kind",
            "rank",
            "lower bound",
            "verification",
            "source",
            "url / reason",
        ):
            table.add_column(col)
        for e in item["evidence"]:
            table.add_row(
                str(e["date"]),
                e["precision"],
                e["kind"],
                str(e["rank"]),
                str(e["lower_bound"]),
                e["verification"],
                str(e["source_key"] or ""),
                str(e["url"] or e["reason"] or ""),
            )
        out.print(table)


def policy(
    ctx: typer.Context,
    name: Annotated[
        str | None, typer.Argument(help=f"One of: {', '.join(POLICIES)}. Omit to show the current one.")
    ] = None,
    reason: Annotated[str | None, typer.Option(help="Why (recorded with the change).")] = None,
    json_out: JsonFlag = False,
) -> None:
    """Show or set the conflict policy the canonical scores view applies.

    prefer-independent (default) never averages a developer-reported number with an independent
    one; prefer-first-party, prefer-tier, mean (paper 002) and latest are the alternatives.
    """
    path = db_path(ctx)
    try:
        with Warehouse.open(path, read_only=name is None) as wh:
            if name is not None:
                try:
                    with wh.transaction() as con:
                        set_policy(con, name, reason or "set from the command line")
                except ValueError as exc:
                    raise fail(str(exc)) from exc
            row = first_row(
                wh.con, "SELECT value, updated_at, reason FROM curation_setting WHERE key = 'conflict_policy'"
            )
    except WarehouseError as exc:
        raise fail(str(exc)) from exc
    data = {"policy": row[0], "updated_at": str(row[1]), "reason": row[2]}
    if json_out:
        emit_json(data)
    else:
        out.print(f"conflict policy: {data['policy']} (since {data['updated_at']}: {data['reason']})")


def quarantine_list(
    ctx: typer.Context,
    source: Annotated[str | None, typer.Option("--source", "-s", help="Only this source.")] = None,
    stage: Annotated[str | None, typer.Option(help="parse, validate, canonicalise or load.")] = None,
    limit: Annotated[int, typer.Option(help="At most this many rows.")] = 50,
    json_out: JsonFlag = False,
) -> None:
    """Rows that could not be validated or mapped: where they came from and why."""
    try:
        with Warehouse.open(db_path(ctx), read_only=True) as wh:
            cur = wh.con.execute(
                "SELECT quarantine_id, source_key, stage, locator, reason, raw_sha256, run_id FROM quarantine"
                " WHERE ($1 IS NULL OR source_key = $1) AND ($2 IS NULL OR stage = $2)"
                " ORDER BY quarantine_id LIMIT $3",
                [source, stage, limit],
            )
            cols = [d[0] for d in cur.description]
            rows = [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
            summary = wh.con.execute(
                "SELECT source_key, stage, count(*) FROM quarantine GROUP BY ALL ORDER BY 1, 2"
            ).fetchall()
    except WarehouseError as exc:
        raise fail(str(exc)) from exc
    if json_out:
        emit_json({"rows": rows, "counts": [{"source": s, "stage": st, "n": n} for s, st, n in summary]})
        return
    for s, st, n in summary:
        console.print(f"{s}: {n} at {st}")
    table = Table(title="quarantine")
    for col in ("id", "source", "stage", "locator", "reason"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(str(r["quarantine_id"]), r["source_key"] or "", r["stage"], r["locator"], r["reason"])
    out.print(table)


def register(app: typer.Typer) -> None:
    app.command("dates")(dates)
    curate = typer.Typer(help="Curation settings and decisions.", no_args_is_help=True)
    curate.command("policy")(policy)
    app.add_typer(curate, name="curate")
    quarantine = typer.Typer(help="What was refused, with reasons and locators.", no_args_is_help=True)
    quarantine.command("list")(quarantine_list)
    app.add_typer(quarantine, name="quarantine")
