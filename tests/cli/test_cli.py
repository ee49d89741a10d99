"""The command line: help that teaches, JSON for scripts, the global --db."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from clirunner import CliRunner
from typer.main import get_command

from evalhouse.cli import app

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def _commands() -> list[tuple[str, ...]]:
    root = get_command(app)
    found = []

    def walk(cmd, prefix):
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, (*prefix, name))
        else:
            found.append(prefix)

    walk(root, ())
    return found


def test_root_help_lists_commands_and_the_db_option() -> None:
    result = runner.invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "--db" in result.output and "stats" in result.output and "import-eee" in result.output


@pytest.mark.parametrize("command", _commands(), ids=" ".join)
def test_every_command_has_help_and_is_documented(command: tuple[str, ...]) -> None:
    result = runner.invoke(app, [*command, "--help"])
    assert result.exit_code == 0, result.output
    text = get_command(app)
    for part in command:
        text = text.commands[part]
    assert (text.help or "").strip(), f"'evalhouse {' '.join(command)}' has no help text"
    # the README or a topic page under docs/ (user documentation lives in both)
    documented = "\n".join(p.read_text() for p in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))])
    assert f"evalhouse {' '.join(command)}" in documented, (
        f"neither the README nor docs/ mention 'evalhouse {' '.join(command)}'"
    )


def test_stats_json_on_a_fresh_warehouse(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    assert runner.invoke(app, ["--db", str(db), "migrate"]).exit_code == 0
    result = runner.invoke(app, ["--db", str(db), "stats", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {"sources", "evaluations", "scores", "models", "benchmarks", "quarantined"} <= set(data)
    assert data["scores"] == 0


def test_db_falls_back_to_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "env.duckdb"
    monkeypatch.setenv("EVALHOUSE_DB", str(db))
    assert runner.invoke(app, ["migrate"]).exit_code == 0
    assert db.exists()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("EVALHOUSE_DB")
    assert runner.invoke(app, ["migrate"]).exit_code == 0
    assert (tmp_path / "warehouse.duckdb").exists()
    assert os.environ.get("EVALHOUSE_DB") is None


def test_stats_on_a_missing_warehouse_is_a_clear_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["--db", str(tmp_path / "none.duckdb"), "stats"])
    assert result.exit_code == 1
    assert "no warehouse" in result.output


def test_models_resolve_json_for_any_name() -> None:
    args = ["models", "resolve", "gpt-5-2025-08-07_high", "--source", "epoch-benchmarks", "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {"input", "source", "developer", "configuration", "base_model", "family", "flags"} <= set(data)
    assert data["base_model"] == "openai/gpt-5" and data["flags"]["effort"] == "high"
    aa = json.loads(runner.invoke(app, ["models", "resolve", "GPT-5 (high)", "--json"]).stdout)
    assert aa["base_model"] == data["base_model"]
    ours = json.loads(runner.invoke(app, ["models", "resolve", "Ours", "--source", "paper-x", "--json"]).stdout)
    other = json.loads(runner.invoke(app, ["models", "resolve", "Ours", "--source", "paper-y", "--json"]).stdout)
    assert ours["base_model"] != other["base_model"]  # generic names never merge across sources


def test_the_console_script_builds_just_the_command_asked_for() -> None:
    """main() registers only the module(s) of the command in argv; the map it uses names every
    top-level command of the full app with the module that registers it."""
    from evalhouse import cli

    full = {c.name for c in get_command(app).commands.values()}
    assert full == set(cli.COMMAND_MODULES)
    for name, modules in cli.COMMAND_MODULES.items():
        built = {c.name for c in get_command(cli.build_app(modules)).commands.values()}
        assert name in built and built < full | {name}, (name, modules)
    assert cli.command_of(["--db", "x.duckdb", "--wait", "3", "stats", "--json"]) == "stats"
    assert cli.command_of(["--db", "stats"]) is None  # 'stats' is the value of --db here
    assert cli.command_of(["--help"]) is None and cli.command_of([]) is None


def test_command_signatures_hold_objects_not_strings() -> None:
    """typer evaluates string annotations anew each time it builds an app (the package docstring says
    why this package has none): every registered command is annotated with objects."""
    from evalhouse import cli

    apps, callbacks = [app], []
    while apps:
        current = apps.pop()
        callbacks += [info.callback for info in current.registered_commands]
        apps += [group.typer_instance for group in current.registered_groups]
    assert len(callbacks) > 30
    stringly = [f"{f.__name__}: {k}" for f in callbacks for k, v in f.__annotations__.items() if isinstance(v, str)]
    assert not stringly, stringly
    package = Path(cli.__file__).parent
    future = "from __future__ import annotations"
    assert not [p.name for p in package.glob("*.py") if future in p.read_text().splitlines()]


@pytest.mark.parametrize(
    "argv,expect",
    [
        (["--help"], "Commands"),  # the root help lists every group
        (["snapshot", "--help"], "create"),
        (["analyze", "--help"], "items"),  # the group two modules fill
        (["no-such-command"], "No such command"),
    ],
)
def test_the_console_script_runs_as_a_process(argv: list[str], expect: str, tmp_path: Path) -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-c", "from evalhouse.cli import main; main()", "--db", str(tmp_path / "w.duckdb"), *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert expect in proc.stdout + proc.stderr, (proc.returncode, proc.stdout[-500:], proc.stderr[-500:])
    if argv == ["--help"]:
        for name in ("stats", "refresh", "analyze", "site", "sql", "simulate-panel"):
            assert name in proc.stdout


@pytest.mark.parametrize("preset", [None, "logfire"])
def test_the_console_script_loads_no_pydantic_plugins_unless_told(preset: str | None) -> None:
    """A command that validates (here the registries) does not scan every distribution's entry
    points for pydantic plugins; a PYDANTIC_DISABLE_PLUGINS the user set is what pydantic sees."""
    import subprocess
    import sys

    probe = (
        "import os, sys; from evalhouse.cli import main\n"
        "sys.argv[1:] = ['models', 'resolve', 'GPT-5 (high)', '--json']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "from pydantic.plugin import _loader\n"
        "print(os.environ['PYDANTIC_DISABLE_PLUGINS'], _loader._plugins is None)"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    if preset:
        env["PYDANTIC_DISABLE_PLUGINS"] = preset
    proc = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=True,
    )
    value, never_scanned = proc.stdout.strip().splitlines()[-1].split()
    assert value == (preset or "__all__")
    assert never_scanned == ("False" if preset else "True")  # a named plugin off: pydantic still scans


@pytest.mark.parametrize(("command", "code"), [(["migrate", "--json"], 0), (["stats", "--json"], 1)])
def test_the_console_script_ends_with_its_heap_frozen_and_exit_handlers_run(
    command: list[str], code: int, tmp_path: Path
) -> None:
    """After its command the console script freezes what is alive (the interpreter's shutdown
    then skips it in its collections); the exit code, the output, exit handlers and the files the
    command wrote are as they were."""
    import subprocess
    import sys

    probe = (
        "import atexit, gc, sys; from evalhouse.cli import main\n"
        "atexit.register(lambda: print('at exit: frozen', gc.get_freeze_count() > 0, flush=True))\n"
        "sys.argv[1:] = ['--db', sys.argv[1], *sys.argv[2:]]\n"
        "main()\n"
    )
    db = tmp_path / "w.duckdb"
    proc = subprocess.run(
        [sys.executable, "-c", probe, str(db), *command], check=False, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == code, proc.stderr[-2000:]
    *out, last = proc.stdout.strip().splitlines()
    assert last == "at exit: frozen True"
    if code == 0:  # the warehouse the command made is whole: a new process reads it
        assert json.loads("\n".join(out))["schema_version"] > 0
        again = subprocess.run(
            [sys.executable, "-m", "evalhouse", "--db", str(db), "stats", "--json"],
            capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
        assert json.loads(again.stdout)["scores"] == 0
    else:
        assert "no warehouse" in proc.stderr


@pytest.mark.parametrize("command", [["report", "--no-record"], ["site"]])
def test_freezing_a_missing_warehouse_is_bad_input(command: list[str], tmp_path: Path) -> None:
    """report and site freeze the live warehouse first: with none at --db they say so (exit 2)."""
    args = ["--db", str(tmp_path / "none.duckdb"), *command]
    if command[0] == "site":
        args.append(str(tmp_path / "out"))
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "no warehouse at" in result.output and not (tmp_path / "none.duckdb").exists()


def test_report_says_which_snapshot_it_froze_or_reused(tmp_path: Path) -> None:
    """An unpinned report freezes the live warehouse first and says so; unchanged, it reuses it."""
    db = str(tmp_path / "w.duckdb")
    assert runner.invoke(app, ["--db", db, "migrate"]).exit_code == 0
    first = runner.invoke(app, ["--db", db, "report", "-o", str(tmp_path / "r.html"), "--no-record"])
    assert first.exit_code == 0, first.output
    (folder,) = (tmp_path / "w.snapshots").iterdir()
    assert f"froze snapshot {folder}" in first.output
    again = runner.invoke(app, ["--db", db, "report", "-o", str(tmp_path / "r.html"), "--no-record"])
    assert f"reusing snapshot {folder}" in again.output
    assert [p.name for p in (tmp_path / "w.snapshots").iterdir()] == [folder.name]
