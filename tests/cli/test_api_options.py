"""The Python API offers everything the command line does: every option of every command is a
parameter of the call the command makes (evalhouse.app, or the analyses of evalhouse.analytics.runs),
or is one of the few options that only shape what the command prints (listed here with the reason).

Commands calling a :class:`House` method or an :mod:`evalhouse.app` function are checked against the
call's signature. The analyses take their settings as keywords they hand down (``**options``), so
their commands are run with the analysis replaced by a recorder, and each option must arrive in the
recorded call.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from clirunner import CliRunner
from typer.main import get_command

import evalhouse.app as api
from evalhouse.analytics import runs
from evalhouse.analytics.runs import Outcome
from evalhouse.app import House
from evalhouse.cli import app

runner = CliRunner()

#: Options that only shape the output or the exit code, never what is done.
CLI_ONLY = {
    "json_out": "--json: print the result's as_dict() as JSON; every call returns the result itself",
    "csv_out": "--csv: how rows are printed; the API returns the rows",
    "raw": "--raw: whether printed CSV/TSV cells are made spreadsheet-safe; the API returns the values",
    "db": "--db: the warehouse is the House's own (House.open(db))",
    "top": "--top: rows of the printed table; the result holds all of them",
    "omega": "efa --omega: also print the Schmid-Leiman loadings; the result always holds them",
}
#: Options that only shape the output in one command (where the same name means more elsewhere).
CLI_ONLY_IN = {
    ("export-eee", "strict"): "--strict: exit 1 on records not exported; the result lists them (.skipped)",
    ("changes", "limit"): "changes --limit: names printed per kind; the report holds all of them",
    ("dates", "conflicts"): "dates --conflicts chooses the call, House.release_date_conflicts()",
}
#: A CLI option whose API parameter has another name, and why.
RENAMED = {
    "skip_validation": "validate",  # a negative flag on the command line, a positive keyword in Python
    "record": "record_into",  # --record/--no-record: the API names the warehouse recorded into (None: not)
}
RENAMED_IN = {
    ("refresh", "source"): "sources",  # repeatable --source KEY: the list of source keys
    ("changes", "source"): "sources",
    ("ingest", "key"): "source",  # the source is an argument of the command, named for what it is
    ("sql", "query"): "sql",
    ("dates", "model"): "model",
    ("models resolve", "source_id"): "source_id",
    ("analyze efa", "factors"): "n_factors",
    ("analyze eci", "bootstrap"): "n_bootstrap",
    ("simulate-panel", "items"): "n_items",
    ("simulate-panel", "checkpoints"): "seed_checkpoints",
    ("simulate-panel", "noise"): "noise_sd",
    ("analyze items", "output"): "out",
    ("analyze items", "cost"): "cost_scenario",
    ("analyze items", "exclusion"): "improvability_exclusion",
    ("report", "record"): "record",  # House.report records into its own warehouse, or not
    ("site", "record"): "record",  # House.site records the analyses it fits into its own warehouse, or not
    ("analyze efa", "record"): "db",  # the CSV analyses read only their file: db is where they record (None: not)
    ("analyze equate", "record"): "db",
    ("reproduce paper-004", "shuffles"): "n_shuffles",
    ("reproduce paper-004", "population"): "population_shift",
}

#: The calls each command makes (several when an option chooses between them).
CALLS: dict[str, list[Callable[..., Any]]] = {
    "migrate": [House.migrate],
    "stats": [House.stats],
    "import-eee": [House.import_eee],
    "export-eee": [House.export_eee],
    "sources": [api.sources],
    "refresh": [House.refresh],
    "ingest": [House.ingest],
    "reparse": [House.reparse],
    "mirror export": [House.export_mirror],
    "mirror from-shared": [api.mirror_from_shared],
    "dates": [House.release_dates, House.correct_release_date, House.release_date_conflicts],
    "curate policy": [House.conflict_policy, House.set_conflict_policy],
    "curate setup-policy": [api.setup_policy],
    "curate benchmark-links": [api.benchmark_links],
    "curate rederive": [House.rederive],
    "quarantine list": [House.quarantine],
    "models resolve": [api.resolve_model],
    "validate": [House.validate],
    "audit score": [House.audit_score],
    "audit model": [House.audit_model],
    "audit verify": [House.verify_raw],
    "conflicts": [House.conflicts],
    "snapshot create": [House.create_snapshot],
    "snapshot verify": [House.verify_snapshot],
    "snapshot diff": [api.diff_snapshots],
    "snapshot open": [api.describe_snapshot, House.query],
    "sql": [House.query, House.sql],
    "site": [House.site],
    "changes": [House.changes],
    "report": [House.report],
}
#: The analyses: the run each command calls, and what a run needs given (a required option).
RUNS: dict[str, tuple[str, list[str]]] = {
    "compare": ("compare", ["--task", "coding"]),
    "analyze efa": ("efa", ["--input", "{csv}"]),
    "analyze factor-grid": ("factor_grid", []),
    "analyze eci": ("eci", []),
    "analyze equate": ("equate_csv", ["--input", "{csv}"]),
    "analyze equate-hub": ("equate_hub", []),
    "analyze items": ("analyze_items", []),
    "simulate-panel": ("simulate_panel", []),
    "reproduce paper-000": ("reproduce_paper000", []),
    "reproduce paper-004": ("reproduce_paper004", []),
}


def _commands() -> dict[str, Any]:
    found: dict[str, Any] = {}

    def walk(cmd: Any, prefix: tuple[str, ...]) -> None:
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, (*prefix, name))
        else:
            found[" ".join(prefix)] = cmd

    walk(get_command(app), ())
    return found


COMMANDS = _commands()


def _api_name(command: str, param: str) -> str | None:
    """The API parameter a CLI parameter is, or None for an option that only shapes the output."""
    if param in CLI_ONLY or (command, param) in CLI_ONLY_IN:
        return None
    return RENAMED_IN.get((command, param)) or RENAMED.get(param, param)


def test_every_command_is_mapped_to_its_call() -> None:
    assert set(COMMANDS) == set(CALLS) | set(RUNS), "a command without a Python call, or a call without a command"


@pytest.mark.parametrize("command", sorted(CALLS))
def test_each_option_is_a_parameter_of_the_call(command: str) -> None:
    accepted = {
        name
        for call in CALLS[command]
        for name, p in inspect.signature(call).parameters.items()
        if name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    }
    missing = []
    for param in COMMANDS[command].params:
        name = _api_name(command, param.name)
        if name is not None and name not in accepted:
            missing.append(f"{param.name} (as {name})")
    assert not missing, f"'evalhouse {command}' has options its Python call lacks: {', '.join(missing)}"


@pytest.mark.parametrize("command", sorted(RUNS))
def test_each_option_of_an_analysis_reaches_its_run(
    command: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    function, given = RUNS[command]
    seen: dict[str, Any] = {}
    real = getattr(runs, function)

    def recorder(*args: Any, **kwargs: Any) -> Outcome:
        seen.update(kwargs)
        seen.update({name: value for name, value in zip(inspect.signature(real).parameters, args, strict=False)})
        return Outcome({}, ok=True)

    monkeypatch.setattr(runs, function, recorder)
    csv = tmp_path / "m.csv"
    csv.write_text("model,a,b\nm1,1,2\nm2,2,3\n", encoding="utf-8")
    argv = [*command.split(), *(a.format(csv=csv) for a in given)]
    runner.invoke(app, ["--db", str(tmp_path / "w.duckdb"), *argv])
    assert seen, f"'evalhouse {command}' did not call evalhouse.analytics.runs.{function}"
    missing = []
    for param in COMMANDS[command].params:
        name = _api_name(command, param.name)
        if name is not None and name not in seen:
            missing.append(f"{param.name} (as {name})")
    assert not missing, f"'evalhouse {command}' does not hand these options to runs.{function}: {', '.join(missing)}"


def test_the_options_said_to_be_cli_only_exist() -> None:
    """The lists above name real options (a renamed or removed one is taken off them)."""
    names = {p.name for cmd in COMMANDS.values() for p in cmd.params}
    assert set(CLI_ONLY) <= names and set(RENAMED) <= names
    for command, param in [*CLI_ONLY_IN, *RENAMED_IN]:
        assert param in {p.name for p in COMMANDS[command].params}, (command, param)
