"""Every real model name resolves as it did when the digest was recorded: the same configuration,
base model, family, developer, flags, setup, match key, parent and name date for every distinct
``model_info`` of the Epoch hub export, the Artificial Analysis snapshot, the legacy EEE datastore,
the model-pairs fixtures and the generated benchmark tree, and the same settings, collapses and
identity keys for every name string among them.

The recorded digest (``data/identity_digest.json``) was written by ``tests/identity_digest.py
record`` before the name rules' code was made faster. Re-record only for an intended change of the
rules, and say so in its commit.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from identity_digest import DIGEST_FILE, LEGACY, _digest, all_cases, name_lines, resolved_lines

from evalhouse.curation.identity import _resolve

RECORDED = json.loads(DIGEST_FILE.read_text())


@pytest.fixture(scope="module")
def cases(shared: Path) -> dict:
    if not (shared / LEGACY / "data").is_dir():
        pytest.skip(f"{shared / LEGACY} is not there")
    return all_cases(shared)


def test_every_section_is_recorded(cases: dict) -> None:
    assert set(cases) == set(RECORDED)
    assert RECORDED["eee-legacy"]["cases"] == 2792


@pytest.mark.parametrize("section", sorted(RECORDED))
def test_every_model_info_resolves_as_recorded(cases: dict, section: str) -> None:
    _resolve.cache_clear()  # resolved here, not remembered from another test
    lines = resolved_lines(cases[section])
    assert len(lines) == RECORDED[section]["cases"], section
    assert _digest(lines) == RECORDED[section]["resolved"], f"{section}: a model_info resolves differently"


@pytest.mark.parametrize("section", sorted(RECORDED))
def test_every_name_reads_as_recorded(cases: dict, section: str) -> None:
    lines = name_lines(cases[section])
    assert len(lines) == RECORDED[section]["names"], section
    assert _digest(lines) == RECORDED[section]["named"], f"{section}: a name's settings or keys differ"
