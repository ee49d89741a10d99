"""Audit commands: trace a score or a model to its bytes, and verify the raw store."""

from typing import Annotated, Any

import typer

from evalhouse.cli._common import DbOption, JsonFlag, console, emit_json, guard, house, out, shown


def _line(text: str) -> None:
    """Print verbatim: URLs, locators and setups contain brackets rich would read as markup."""
    out.print(text, markup=False, highlight=False, soft_wrap=True)


def audit_score(
    ctx: typer.Context,
    score_id: Annotated[
        str,
        typer.Argument(
            help="A score id, or the first 6+ hex digits of its fingerprint (both survive a reparse; "
            "see 'audit model' or 'conflicts')."
        ),
    ],
    db: DbOption = None,
    json_out: JsonFlag = False,
) -> None:
    """Trace one score to its bytes: score -> evaluation -> raw snapshot -> source.

    Shows the raw snapshot (the canonical url and, for a mirror replay, the url actually fetched;
    retrieved_at, sha256, storage path, whether the bytes still hash to it), the locators of the
    score and of its record and what they count, every canonicalisation step (raw value/unit ->
    canonical), who ran / reported / originally published it, the curation decisions touching it
    (supersessions, duplicate skips, conflict resolutions of its cell), whether it is its source
    row's current value, every candidate value of its cell with its source, the spread and the rule
    that chose the canonical value, and the release-date evidence of its base model.

    Example: evalhouse audit score 1089933429525066969; evalhouse audit score 3f9a1c --json
    """
    with guard():
        chain = house(ctx, db).audit_score(score_id)
    if json_out:
        emit_json(chain)
    else:
        _print_chain(chain)


def audit_model(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="A config id, a source's model id, a model name or a base model id.")],
    benchmark: Annotated[
        str | None, typer.Option("--benchmark", "-b", help="Only this benchmark (id or raw name).")
    ] = None,
    db: DbOption = None,
    json_out: JsonFlag = False,
) -> None:
    """List a model's scores with their provenance chains, and its release-date evidence.

    NAME is matched as a configuration id, then a source's model identifier, then a model name,
    then a base model id; failing all, the model-name rules resolve it to a base model.
    """
    with guard():
        report = house(ctx, db).audit_model(name, benchmark=benchmark)
    if json_out:
        emit_json(report)
    else:
        _print_model(report)


def audit_verify(ctx: typer.Context, db: DbOption = None, json_out: JsonFlag = False) -> None:
    """Re-hash every raw store object (loose files and packed blobs) and check every referenced
    payload's bytes are present.

    Checks raw_snapshot.sha256, evaluation.raw_sha256 and evaluation.samples_sha256. Exit code 1
    when any object no longer matches its hash or any referenced payload is missing.
    """
    where = house(ctx, db)
    with guard():
        report = where.verify_raw()
    if json_out:
        emit_json({"raw_store": str(where.raw_store_path), **report.as_dict()})
    else:
        _line(
            f"raw store {where.raw_store_path}: re-hashed {report.objects_checked:,} stored objects, "
            f"{report.payloads_referenced:,} payloads referenced"
        )
        for item in report.corrupt:
            _line(f"CORRUPT {item['path']}: {item['problem']} (referenced by {_refs(item)})")
        for item in report.missing:
            _line(f"MISSING {item['sha256']}: {item['problem']} (referenced by {_refs(item)})")
    if not report.ok:
        console.print(f"[bold red]{len(report.corrupt)} corrupt, {len(report.missing)} missing[/]", highlight=False)
        raise typer.Exit(1)
    console.print("[green]ok[/]: every stored object matches its hash and every payload is present")


def _refs(item: dict[str, Any]) -> str:
    refs = ", ".join(item["referenced_by"]) or "nothing"
    return f"{refs}; {item['n_evaluations']} evaluations; url {item['url']}"


# -- rendering -------------------------------------------------------------------------------


def _print_chain(c: dict[str, Any]) -> None:
    s, canon, ev, raw = c["score"], c["canonicalisation"], c["evaluation"], c["raw"]
    setup = f" [{s['setup_key']}]" if s["setup_key"] else ""
    subset = f" ({s['subset']})" if s["subset"] else ""
    params = f" {s['metric_params_key']}" if s["metric_params_key"] else ""
    direction = "lower" if s["lower_is_better"] else "higher"
    _line(f"score {s['score_id']}  {s['benchmark_id']}{subset} / {s['metric_id']}{params}{setup}")
    _line(f"  fingerprint    {s['fingerprint']}")
    raw_text = f"raw {s['raw_value']} {s['raw_unit']}"
    _line(f"  value          {s['value']} {s['unit']} ({raw_text}), {direction} is better")
    m = c["model"]
    _line(
        f"  model          {m['config_id']} (base {m['base_model_id']}; source id {m['source_model_id']},"
        f" name {m['source_model_name']})"
    )
    _line("  canonicalisation")
    for i, step in enumerate(canon["steps"], start=1):
        _line(f"    {i}. {step}")
    _line(f"  evaluation     {ev['evaluation_id']} (fingerprint {ev['evaluation_fingerprint']})")
    _line(f"    record locator  {raw['record_locator']}")
    _line(f"    score locator   {raw['score_locator']}")
    _line(f"    (locators: {raw['locators']})")
    if ev["datastore_path"]:
        _line(f"    datastore path  {ev['datastore_path']}")
    _line("  raw snapshot")
    _line(f"    sha256          {raw['sha256']}")
    _line(f"    url             {raw['url']}")
    if raw["fetched_from"]:
        _line(f"    fetched from    {raw['fetched_from']} (a mirror replay: these bytes came from here, not the url)")
    _line(f"    retrieved_at    {raw['retrieved_at']}")
    _line(f"    storage path    {raw['storage_path']}")
    if "bytes" in raw:
        _line(f"    bytes           {raw['bytes']['status']} ({raw['bytes']['path']})")
    _line(f"    fetches         {len(raw['fetches'])}")
    src = c["source"]
    _line(f"  source         {src['name']} ({src['key']}), tier {src['tier']}, {src['organisation']}")
    run = c["run"]
    how = f"{run['trigger']}, {run['status']}, parser {run['parser_version']}"
    _line(f"  run            {run['run_id']} ({how})")
    a = c["attribution"]
    _line(f"  evaluated by   {a['evaluated_by']} ({a['evaluator_relationship']})")
    _line(f"  reported by    {a['reported_by']}")
    _line(f"  original       {a['original_source']} {a['original_source_url'] or ''}".rstrip())
    _print_status(c)
    _print_decisions(c["decisions"])
    _print_release_dates(c["release_dates"])


def _print_status(c: dict[str, Any]) -> None:
    cur = c["current"]
    if cur["is_current"]:
        _line("  current        yes: the current value of its source row")
    else:
        _line(f"  current        no: superseded by score {cur['current_score_id']}")
    cell = c["canonical"]
    if cell is None:
        _line("  canonical      its cell has no canonical value")
        return
    used = "uses this score" if cell["used"] else "does not use this score"
    _line(
        f"  canonical      {cell['value']} {cell['unit']} under policy {cell['policy']} from scores "
        f"{cell['score_ids']} ({cell['n_used']} of {cell['n_candidates']} candidates); {used}"
    )
    _line(f"    rule          {cell['rule']}")
    _line(f"    decided by    {cell['decision']} (run {cell['rule_run_id']})")
    _line(f"    order         {cell['order']}")
    if cell["n_candidates"] > 1:
        spread = "n/a" if cell["spread"] is None else f"{cell['spread']:.4g} of the metric's range"
        flag = " — the sources disagree beyond the tolerance" if cell["disagreement"] else ""
        _line(f"    spread        {spread}{flag}")
        _print_candidates(cell["candidates"])


def _print_candidates(candidates: list[dict[str, Any]], indent: str = "    ") -> None:
    _line(f"{indent}candidates")
    for c in candidates:
        mark = "*" if c["used"] else " "
        value = " ".join(str(v) for v in (f"{c['value']:.6g}", c.get("unit")) if v)
        setup = c.get("setup")
        harness = c.get("harness") or (setup.get("harness") if isinstance(setup, dict) else None)
        via = f", harness {harness}" if harness and harness != "unknown" else ""
        _line(
            f"{indent} {mark} {value}  score {c['score_id']}  {c['source_key']} (tier {c['source_tier']}), "
            f"evaluated by {c['evaluated_by']}{via}, run {c['run_id']}"
        )


def _print_decisions(decisions: list[dict[str, Any]]) -> None:
    if not decisions:
        _line("  decisions      none")
        return
    _line("  decisions")
    for d in decisions:
        _line(f"    #{d['decision_id']} {d['kind']}: {d['rule']} (run {d['run_id']}, {d['created_at']})")


def _print_release_dates(evidence: list[dict[str, Any]]) -> None:
    if not evidence:
        _line("  release dates  no evidence")
        return
    _line("  release dates")
    for e in evidence:
        bound = " (lower bound)" if e["lower_bound"] else ""
        _line(
            f"    {e['date']} ({e['precision']}){bound} {e['kind']}, {e['verification']}, "
            f"{e['source_key']} {e['url'] or ''}".rstrip()
        )


def _print_model(r: dict[str, Any]) -> None:
    configs = ", ".join(f"{c['config_id']} ({c['n_scores']} scores)" for c in r["configs"])
    _line(f"{r['query']!r} matched by {r['matched_by']}: {configs}")
    if r["other_configs_of_base_models"]:
        _line(f"other configurations of the same base model: {', '.join(r['other_configs_of_base_models'])}")
    on = f" on {r['benchmark']}" if r["benchmark"] else ""
    _line(f"{len(r['scores'])} scores{on}")
    for s in r["scores"]:
        setup = f" [{s['setup_key']}]" if s["setup_key"] else ""
        _line(f"  score {s['score_id']}  {s['config_id']}  {s['benchmark_id']} / {s['metric_id']}{setup}")
        _line(
            f"      {s['value']:.6g} {s['unit']} (raw {s['raw_value']:g} {s['raw_unit']}, "
            f"{len(s['canonical_steps'])} steps)  current: {'yes' if s['is_current'] else 'no'}"
            f"  canonical: {'yes' if s['in_canonical'] else 'no'}"
        )
        original = f", original {s['original_source']}" if s["original_source"] else ""
        _line(f"      {s['source_key']} (tier {s['source_tier']}), evaluated by {s['evaluated_by']}{original}")
        _line(f"      raw {shown(s['raw_sha256'])} {s['url']} @ {s['retrieved_at']}; record {s['record_locator']}")
    _print_release_dates(r["release_dates"])


def conflicts(
    ctx: typer.Context,
    benchmark: Annotated[
        str | None, typer.Option("--benchmark", "-b", help="Only this benchmark (id, registry name or raw name).")
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Only this model (named as in 'audit model').")
    ] = None,
    disagreeing: Annotated[
        bool, typer.Option("--disagreeing", help="Only cells whose candidates differ beyond the tolerance.")
    ] = False,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Show at most this many cells.")] = 50,
    db: DbOption = None,
    json_out: JsonFlag = False,
) -> None:
    """Cells more than one source (or run) gives a value for, which value is used and why.

    A cell is model configuration x benchmark x subset x metric x metric parameters x the setup
    fields that define it ('evalhouse curate setup-policy'). Each cell lists every candidate
    (value, source, tier, who ran it, the harness; '*' marks the one used), the spread on the
    metric's range, and the rule that decided: the candidates are ordered by the conflict policy
    ('evalhouse curate policy'), then source tier, then who ran it, then observation date, then
    the lowest score id (a tiebreak, said when it decided). Cells that disagree come first.

    With --model, also the near misses: cells of the same base model (on the benchmark, its
    family and its benchmark links) whose sources did not meet, and the part of the key that kept
    each pair apart (configuration, benchmark, subset, metric, a setup field).

    Example: evalhouse conflicts --benchmark "GPQA Diamond" --disagreeing;
    evalhouse conflicts --model GPT-4o --benchmark "GPQA Diamond"
    """
    with guard():
        report = house(ctx, db).conflicts(benchmark=benchmark, model=model, disagreeing=disagreeing, limit=limit)
    if json_out:
        emit_json(report)
        return
    scope = f" on {report['benchmark']}" if report["benchmark"] else ""
    _line(
        f"{report['cells_with_candidates']:,} cells{scope} have more than one candidate, "
        f"{report['cells_disagreeing']:,} disagree beyond the tolerance; showing {report['shown']:,}"
    )
    if report["rule"]:
        _line(f"policy {report['rule']}")
    for cell in report["cells"]:
        subset = f" ({cell['subset']})" if cell["subset"] else ""
        params = f" {cell['metric_params_key']}" if cell["metric_params_key"] else ""
        setup = f" [{cell['setup_key']}]" if cell["setup_key"] else ""
        spread = "n/a" if cell["spread"] is None else f"{cell['spread']:.3g}"
        flag = "  DISAGREE" if cell["disagreement"] else ""
        _line(
            f"{cell['config_id']}  {cell['benchmark_id']}{subset} / {cell['metric_id']}{params}{setup}: "
            f"{cell['value']:.6g} {cell['unit']} (spread {spread}){flag}"
        )
        _line(f"  decided by {cell['decision']} (run {cell['rule_run_id']})")
        _print_candidates([c | {"unit": cell["unit"]} for c in cell["candidates"]], indent="  ")
    if report["near_misses"] is not None:
        _print_near_misses(report["near_misses"])


def _cell_text(c: dict[str, Any]) -> str:
    subset = f" ({c['subset']})" if c["subset"] else ""
    params = f" {c['metric_params_key']}" if c["metric_params_key"] else ""
    setup = f" [{c['setup_key']}]" if c["setup_key"] else ""
    value = "n/a" if c["value"] is None else f"{c['value']:.6g}"
    return (
        f"{c['config_id']}  {c['benchmark_id']}{subset} / {c['metric_id']}{params}{setup}: {value} "
        f"from {', '.join(c['sources'])}"
    )


def _print_near_misses(found: dict[str, Any]) -> None:
    on = f" on {', '.join(found['benchmarks'])}" if found["benchmarks"] else ""
    bases = ", ".join(found["base_models"])
    _line(f"near misses: {len(found['cells'])} cells of base model {bases}{on}")
    for c in found["cells"]:
        _line(f"  {_cell_text(c)}")
    if not found["pairs_total"]:
        _line("  no two of them come from different sources: nothing failed to meet")
        return
    shown = len(found["pairs"])
    more = f" (the {shown} nearest shown)" if shown < found["pairs_total"] else ""
    _line(f"{found['pairs_total']} pairs from different sources did not meet{more}; kept apart by:")
    for p in found["pairs"]:
        a, b = p["a"], p["b"]
        _line(f"  {', '.join(a['sources'])} {_value(a)} vs {', '.join(b['sources'])} {_value(b)}:")
        for d in p["apart_by"]:
            note = f" — {d['note']}" if d.get("note") and not d["part"].startswith("setup ") else ""
            _line(f"    {d['part']}: {d['a'] or 'not stated'} vs {d['b'] or 'not stated'}{note}")


def _value(c: dict[str, Any]) -> str:
    return "n/a" if c["value"] is None else f"{c['value']:.6g} ({c['config_id']})"


def register(app: typer.Typer) -> None:
    audit = typer.Typer(
        help="Trace numbers to their bytes: a score's chain, a model's scores, the raw store's integrity.",
        no_args_is_help=True,
    )
    audit.command("score")(audit_score)
    audit.command("model")(audit_model)
    audit.command("verify")(audit_verify)
    app.add_typer(audit, name="audit")
    app.command("conflicts")(conflicts)
