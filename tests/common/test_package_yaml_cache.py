"""Package YAML read through its compiled copy is the YAML: the same data as a fresh parse for
every registry and source mapping shipped; a changed file is parsed afresh (the copy is named by
the bytes' hash); a torn copy, an unwritable cache folder and data marshal cannot hold (dates)
all fall back to parsing."""

from __future__ import annotations

import datetime as dt
from importlib import resources
from pathlib import Path

import pytest

from evalhouse.common.cache import ENV_CACHE
from evalhouse.common.yamls import load_package_yaml, load_yaml


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(ENV_CACHE, str(tmp_path / "cache"))
    return tmp_path / "cache" / "yaml"


def shipped() -> list[bytes]:
    files = []
    for package in ("evalhouse.curation.registries", "evalhouse.ingest.sources"):
        files += [p.read_bytes() for p in resources.files(package).iterdir() if p.name.endswith(".yaml")]
    return files


def test_every_shipped_yaml_reads_the_same_through_its_copy(cache: Path) -> None:
    files = shipped()
    assert len(files) > 10
    for raw in files:
        first, second = load_package_yaml(raw), load_package_yaml(raw)  # parsed and kept, then the copy
        assert first == second == load_yaml(raw)
    assert len(list(cache.glob("*.marshal"))) == len(set(files))


def test_a_changed_file_is_parsed_afresh(cache: Path) -> None:
    assert load_package_yaml(b"version: 1\nitems: [a, b]\n") == {"version": 1, "items": ["a", "b"]}
    assert load_package_yaml(b"version: 2\nitems: [a]\n") == {"version": 2, "items": ["a"]}
    assert len(list(cache.glob("*.marshal"))) == 2


def test_a_torn_copy_is_parsed_again_and_replaced(cache: Path) -> None:
    raw = b"a: {b: [1, 2.5, true, null]}\n"
    load_package_yaml(raw)
    (copy,) = cache.glob("*.marshal")
    copy.write_bytes(copy.read_bytes()[:5])
    assert load_package_yaml(raw) == {"a": {"b": [1, 2.5, True, None]}}
    assert load_package_yaml(raw) == load_yaml(raw)


def test_dates_are_parsed_every_time_and_an_unwritable_cache_costs_only_the_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv(ENV_CACHE, str(blocked))
    assert load_package_yaml(b"when: 2026-01-01\n") == {"when": dt.date(2026, 1, 1)}
    assert load_package_yaml(b"x: 1\n") == {"x": 1}
