"""The packaged registries' version without loading them is the loaded registries' version."""

from __future__ import annotations

import subprocess
import sys

import pytest

from evalhouse.curation import packaged_registry
from evalhouse.curation.packaged_registry import PACKAGED, packaged_version, resolve
from evalhouse.curation.registry import load_registry


def test_the_version_read_from_the_files_is_the_loaded_registry_s() -> None:
    assert packaged_version() == PACKAGED.version == load_registry().version
    assert resolve(PACKAGED) is load_registry() and resolve(load_registry()) is load_registry()


def test_reading_the_version_loads_no_pydantic_model() -> None:
    probe = (
        "import sys; from evalhouse.curation.packaged_registry import PACKAGED\n"
        "print(PACKAGED.version, 'pydantic' in sys.modules, 'evalhouse.curation.registry' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    version, pydantic, registry = done.stdout.split()
    assert version == load_registry().version and (pydantic, registry) == ("False", "False")


@pytest.mark.parametrize(
    "doc",
    [{"version": "6"}, {"version": 6.0}, {"version": True}, {}, ["not", "a", "mapping"], "text"],
    ids=["string", "float", "bool", "missing", "list", "scalar"],
)
def test_a_version_field_the_loader_reads_differently_is_left_to_it(
    doc: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A version pydantic coerces (or a file it refuses) is the loaded registry's, or its error."""
    from evalhouse.common import yamls

    real = yamls.load_package_yaml

    def odd_metrics(raw: bytes) -> object:
        data = real(raw)
        return doc if isinstance(data, dict) and "metrics" in data and "units" not in data else data

    monkeypatch.setattr(yamls, "load_package_yaml", odd_metrics)
    monkeypatch.setattr(packaged_registry, "_loaded_version", lambda: "the loader's")
    packaged_version.cache_clear()
    try:
        assert packaged_version() == "the loader's"
    finally:
        packaged_version.cache_clear()
