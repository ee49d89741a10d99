"""The documentation keeps its promises: the CLI reference is the commands' own text, every file a
doc cites exists, and the README stays a short front door."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = sorted(
    p for p in [REPO / "README.md", REPO / "benchmarks" / "README.md", *(REPO / "docs").glob("*.md")] if p.is_file()
)
#: A repository path as docs cite it: `evalhouse/...`, `tests/...`, `benchmarks/...`, `docs/...`, `scripts/...`.
CITED = re.compile(r"(?<![\w./-])((?:evalhouse|tests|benchmarks|docs|scripts|\.ci)/[\w./-]*\w)")


def test_the_cli_reference_is_generated_from_the_commands_and_current() -> None:
    spec = importlib.util.spec_from_file_location("cli_reference", REPO / "scripts" / "cli_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    current = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert current == module.render(), "docs/cli.md is stale: run .venv/bin/python scripts/cli_reference.py"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_file_a_doc_cites_exists(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    missing = set()
    for match in CITED.finditer(text):
        path = match.group(1).rstrip(".")
        if set(text[match.end() : match.end() + 2]) & {"*", "<", "{", "…"}:  # a pattern, not a file
            continue
        if not (REPO / path).exists():
            missing.add(path)
    assert not missing, f"{doc.relative_to(REPO)} cites files that do not exist: {sorted(missing)}"


def test_the_readme_is_a_short_front_door() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines; reference belongs in docs/"
    head = "\n".join(lines[:12])
    assert "make run" in head and "make test" in head
