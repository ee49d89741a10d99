"""The package layout the architecture promises: one package, five subpackages."""

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("sub", ["ingest", "schema", "curation", "warehouse", "analytics"])
def test_subpackage_exists_and_imports(sub: str) -> None:
    assert (REPO / "evalhouse" / sub / "__init__.py").is_file()
    importlib.import_module(f"evalhouse.{sub}")


@pytest.mark.parametrize("path", ["tests", "benchmarks", "Makefile", "README.md", "pyproject.toml", ".ci/run"])
def test_root_files(path: str) -> None:
    assert (REPO / path).exists(), f"{path} is missing at the repository root"


def test_ci_runs_the_readme_test_command() -> None:
    ci = (REPO / ".ci" / "run").read_text()
    readme = (REPO / "README.md").read_text()
    assert "make test" in ci
    head = "\n".join(readme.splitlines()[:25])
    assert "make run" in head and "make test" in head, "the README must open with the two commands"


def _make(*args: str) -> str:
    import shutil
    import subprocess

    if shutil.which("make") is None:
        pytest.skip("no make on this machine")
    done = subprocess.run(["make", "--no-print-directory", *args], cwd=REPO, capture_output=True, text=True, check=True)
    return done.stdout


def test_the_nightly_job_installs_the_core_only_and_the_tests_install_the_extras() -> None:
    run = _make("-n", "-W", "pyproject.toml", "run")  # as if the project changed: what 'make run' would install
    installs = [line for line in run.splitlines() if "pip install" in line]
    assert installs and all("-e ." in line and "[" not in line for line in installs), installs
    test = _make("-n", "-W", "pyproject.toml", "test")
    assert any("'.[test,spark,embed]'" in line for line in test.splitlines() if "pip install" in line)


def test_make_help_writes_no_colour_codes_into_a_pipe() -> None:
    listed = _make("help")
    assert "\x1b" not in listed and "  run " in listed and "  test " in listed


def test_the_checkpoint_library_imports_in_a_process_without_a_main_file() -> None:
    """great_expectations imports pyspark when it is installed; pyspark without its Connect
    dependencies ends a ``python -c`` process (and every pytest-xdist worker) with exit 0."""
    proc = subprocess.run(
        [sys.executable, "-c", "import great_expectations; print('imported')"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "imported", proc.stderr[-2000:]
