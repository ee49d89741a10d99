"""Plain option values pass without pydantic, exactly as typer's validators would return them.

:mod:`evalhouse.cli._lean_params` lets values that need no conversion through and hands the rest
to the validator typer builds; here every parameter of every command is held to typer's own
results (the same value, the same type) and errors, and a quiet ``refresh`` is shown to import no
pydantic at all.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer import _adapters, core
from typer.main import get_command
from typer.testing import CliRunner

from evalhouse.cli import _lean_params, app

SAMPLES: tuple[Any, ...] = (
    None,
    "",
    "x",
    "models.duckdb",
    "\udce9name",  # a file name that is not UTF-8
    "0",
    "1",
    "5",
    "007",
    "0.5",
    "1.0",
    "2.75",
    "300",
    "-1",
    "1e3",
    " 5",
    "1_000",
    "nan",
    "inf",
    "12345678901234567890",
    True,
    False,
    0,
    1,
    300,
    0.5,
    1.0,
    300.0,
    float("nan"),
    float("inf"),
    ("a", "b"),
    ["epoch-benchmarks"],
    (),
    ("a", 1),
)


def _parameters() -> list[Any]:
    """One parameter of every command of the app per kind (annotation and bounds)."""
    found: dict[tuple[str, Any, Any], Any] = {}

    def walk(cmd: Any) -> None:
        for param in cmd.params:
            d = param.type_descriptor
            found.setdefault((repr(d.annotation), d.parameter_info.min, d.parameter_info.max), param)
        for sub in (getattr(cmd, "commands", None) or {}).values():
            walk(sub)

    walk(get_command(app))
    return list(found.values())


def _typer(descriptor: Any, value: Any, param: Any) -> tuple[str, Any]:
    adapter = _adapters.try_build_adapter(descriptor.annotation, descriptor.parameter_info)
    assert adapter is not None
    try:
        return "ok", adapter.validate_python(value, context={"ctx": None, "param": param})
    except Exception as exc:  # noqa: BLE001 - the error is what is compared
        return "error", type(exc).__name__


PARAMS = [p for p in _parameters() if _lean_params.is_plain(p.type_descriptor)]


def test_the_lean_path_is_installed_and_covers_the_plain_parameters() -> None:
    assert _lean_params.install()
    assert core.build_runtime_param.__module__ == _lean_params.__name__
    kinds = {(repr(p.type_descriptor.annotation), p.type_descriptor.parameter_info.min) for p in PARAMS}
    assert {("<class 'str'>", None), ("<class 'bool'>", None), ("list[str]", None), ("<class 'float'>", 1.0)} <= kinds
    assert {("<class 'float'>", 0), ("<class 'int'>", 1), ("<class 'int'>", 0)} <= kinds


@pytest.mark.parametrize("param", PARAMS, ids=lambda p: p.name)
def test_a_passed_value_is_the_one_typer_returns(param: Any) -> None:
    descriptor = param.type_descriptor
    for value in SAMPLES:
        if value is None:
            continue  # typer answers None before any coercion
        lean = _lean_params.lean_value(descriptor.annotation, descriptor.parameter_info, value)
        if lean is _lean_params._NOT_PLAIN:
            continue  # handed to typer's validator: typer's result by construction
        expected = _typer(descriptor, value, param)
        assert expected[0] == "ok", (value, expected)
        assert lean == expected[1] and type(lean) is type(expected[1]), (value, lean, expected)
        if descriptor.annotation is str:
            assert lean is value is expected[1]  # the string itself, as pydantic returns it


def test_values_that_need_typer_get_typer_s_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    db = str(tmp_path / "w.duckdb")
    bad = runner.invoke(app, ["--db", db, "refresh", "--deadline", "0.5", "--json"])
    assert bad.exit_code == 2 and "deadline" in bad.output and "greater than or equal to 1" in bad.output
    worse = runner.invoke(app, ["--db", db, "--wait", "soon", "stats"])
    assert worse.exit_code == 2 and "--wait" in worse.output
    assert runner.invoke(app, ["--db", db, "--wait", "1_000", "migrate"]).exit_code == 0  # typer's float reads it


def test_a_parameter_typer_coerces_is_not_plain() -> None:
    def probe(path: Path = typer.Option(Path("."))) -> None: ...  # noqa: B008 - a typer default

    built = typer.Typer()
    built.command()(probe)
    (param,) = [p for p in get_command(built).params if p.name == "path"]
    assert not _lean_params.is_plain(param.type_descriptor)


def test_a_quiet_refresh_never_imports_pydantic(shared: Path, tmp_path: Path) -> None:
    """A second refresh of an unchanged payload (its own process, as a user runs it) imports neither
    pydantic, nor the loader, nor the registries' models, nor rich (--json prints none of it):
    only typer, the catalog, the ledger and the warehouse."""
    from evalhouse.ingest.pinned import mirror_from_shared

    mirror_from_shared(shared, tmp_path / "mirror")
    argv = ["--db", str(tmp_path / "w.duckdb"), "refresh", "-s", "artificial-analysis"]
    argv += ["--mirror", str(tmp_path / "mirror"), "--json", "--deadline", "30"]
    probe = (
        "import json, sys; from evalhouse.cli import main\n"
        f"sys.argv[1:] = {argv!r}\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = ('pydantic', 'evalhouse.warehouse.load', 'evalhouse.curation.registry', 'pyarrow', 'rich')\n"
        "print(json.dumps([m for m in heavy if m in sys.modules]), file=sys.stderr)"
    )
    runs = []
    for _night in range(2):
        done = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True, env=dict(os.environ)
        )
        runs.append((json.loads(done.stdout)["runs"][0]["status"], json.loads(done.stderr.strip().splitlines()[-1])))
    assert runs[0][0] == "completed" and {"pydantic", "pyarrow"} <= set(runs[0][1])  # the first night loads
    assert runs[1] == ("unchanged", [])
