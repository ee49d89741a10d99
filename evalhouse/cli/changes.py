"""``evalhouse changes``: what the last refresh (or every run since a moment) changed, per source."""

from typing import Annotated, Any

import typer

from evalhouse.cli._common import DbOption, JsonFlag, SourceOption, emit_json, guard, house, out

SinceOption = Annotated[
    str | None,
    typer.Option(
        "--since",
        metavar="RUN|DATE",
        help="A run id (or an unambiguous prefix of one) or a date / date and time in UTC (2026-07-01,"
        " 2026-07-01T02:00). Default: since the previous refresh of each source.",
    ),
]
ToleranceOption = Annotated[
    float,
    typer.Option(
        "--tolerance",
        metavar="SHARE",
        min=0.0,
        help="A value moved when |new - old| > SHARE × max(|old|, |new|). Default 0.001 (0.1%).",
    ),
]
LimitOption = Annotated[
    int, typer.Option("--limit", min=0, help="Names and values listed per kind and source (0 = all); --json has all.")
]


def changes(
    ctx: typer.Context,
    since: SinceOption = None,
    tolerance: ToleranceOption = 0.001,
    source: SourceOption = None,
    limit: LimitOption = 20,
    db: DbOption = None,
    json_out: JsonFlag = False,
) -> None:
    """What changed, per source: new and vanished models, new and vanished benchmarks, values that
    moved (old and new), and runs that failed or were skipped.

    A source's board at a refresh is read again from the payloads that refresh stored (the raw
    store keeps their bytes), so both boards are parsed by today's parser. Runs other than
    refreshes (ingest, reparse, import-eee) are listed, not compared. A refresh a drift guard
    refused after reading the whole board (rows dropped beyond the guard, ...) changed nothing,
    and the report says what its board would have changed. Each 'evalhouse refresh' writes this
    report for its own runs to <db stem>.reports/latest.json (see docs/operations.md). Exit 0
    whatever changed; 2 for a --since that names no run and is no date, or an unknown --source.
    """
    with guard():
        report = house(ctx, db).changes(since=since, tolerance=tolerance, sources=source)
    if json_out:
        emit_json(report)
        return
    for line in report_lines(report, limit or None):
        out.print(line, highlight=False, markup=False)


def report_lines(report: dict[str, Any], limit: int | None = 20) -> list[str]:
    """The report as plain lines (a terminal, a log, a mail from cron)."""
    lines = [f"changes {report['since']['text']}; {report['tolerance']['rule']}"]
    quiet: list[str] = []
    for block in report["sources"]:
        if all(r["status"] == "skipped" for r in block["runs"]):
            quiet.append(block["source"])
            continue
        lines += _source_lines(block, limit)
    if quiet:
        lines.append(f"skipped: {', '.join(quiet)} (no payload fetched; see 'evalhouse sources')")
    if not report["sources"]:
        lines.append("no runs in the window")
    t = report["totals"]
    lines.append(
        f"in all: {t['runs']} runs ({t['runs_failed']} failed, {t['runs_skipped']} skipped); {t['models_new']} new and "
        f"{t['models_vanished']} vanished models, {t['benchmarks_new']} new benchmarks, {t['values_moved']} values "
        f"moved; {t['refused']} boards refused"
    )
    return lines


def _shown(items: list[Any], limit: int | None) -> tuple[list[Any], str]:
    if limit is None or len(items) <= limit:
        return items, ""
    return items[:limit], f"    … and {len(items) - limit} more (--limit 0, or --json, lists all)"


def _source_lines(block: dict[str, Any], limit: int | None) -> list[str]:
    lines = [f"{block['source']}:"]
    for run in block["runs"]:
        error = f": {run['error']}" if run["error"] and run["status"] in ("failed", "partial", "skipped") else ""
        counts = ""
        if run["loaded"] or run["quarantined"]:
            counts = f"; loaded {run['loaded']:,}, quarantined {run['quarantined']:,}"
        when = run["finished_at"] or run["started_at"]
        lines.append(f"  {run['trigger']} {run['status']} at {when} ({run['run_id']}){counts}{error}")
    if block["note"]:
        lines.append(f"  {block['note']}")
    if block["changes"] is not None:
        base = block["baseline"]
        against = f"the board of {base['run_id']} ({base['at']})" if base else "nothing (the first board)"
        lines.append(f"  board of {block['current']['run_id']} against {against}:")
        lines += _change_lines(block["changes"], limit, first=bool(block.get("first")))
    refused = block["refused"]
    if refused is not None:
        lines.append(
            f"  refused by the {refused['guard']} guard: the board stays as it was; the refused board would have:"
        )
        if refused["changes"] is None:
            lines.append("    (its payloads are not readable again)")
        else:
            lines += _change_lines(refused["changes"], limit, first=False)
    return lines


def _change_lines(c: dict[str, Any], limit: int | None, *, first: bool) -> list[str]:
    m, b, v = c["models"], c["benchmarks"], c["values"]
    if first:
        return [f"    {m['after']:,} models, {b['after']:,} benchmarks, {v['after']:,} values (a first board)"]
    lines = [f"    models {m['before']:,} → {m['after']:,}: {len(m['new'])} new, {len(m['vanished'])} vanished"]
    for sign, key in (("+", "new"), ("-", "vanished")):
        shown, more = _shown(m[key], limit)
        for model in shown:
            name = f" ({model['name']})" if model["name"] and model["name"] != model["id"] else ""
            lines.append(f"      {sign} {model['id']}{name}, {model['values']} values")
        lines += [more] if more else []
    for key in ("new", "vanished"):
        if b[key]:
            names = [x["name"] + (f" (= {x['benchmark_id']})" if x.get("benchmark_id") else "") for x in b[key]]
            shown, more = _shown(names, limit)
            rest = f" and {len(names) - len(shown)} more" if more else ""
            lines.append(f"    benchmarks {key}: {', '.join(shown)}{rest}")
    lines.append(
        f"    values: {v['compared']:,} compared, {len(v['moved'])} moved; {v['new']:,} new and "
        f"{v['vanished']:,} vanished values of models on both boards"
    )
    shown, more = _shown(v["moved"], limit)
    for move in shown:
        lines.append(f"      ~ {_cell(move)}: {move['old']:g} → {move['new']:g} ({move['change']:+g})")
    lines += [more] if more else []
    return lines


def _cell(move: dict[str, Any]) -> str:
    name = move["benchmark"] + (f" [{move['evaluation']}]" if move["evaluation"] else "")
    return f"{move['model']} × {name} ({move['metric']})" + (f" [{move['setup']}]" if move["setup"] else "")


def register(app: typer.Typer) -> None:
    app.command("changes")(changes)
