"""The package layout the architecture promises: one package, five subpackages."""

import importlib
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
