"""The packaged registries, standing in for them until something needs more than their version.

Every run records the version of the registries its rows were canonicalised with, and a refresh
compares it with the last loading run's to tell whether stored rows must be canonicalised again.
A quiet night (nothing fetched changed, the registries unchanged) needs that version and nothing
else, yet :func:`~evalhouse.curation.registry.load_registry` validates six files with pydantic and
compiles the name rules. :class:`PackagedRegistry` stands for the packaged registries until
something needs them: its :attr:`~PackagedRegistry.version` is read from the files' bytes and
``version`` fields — the same string :attr:`Registry.version` gives — and :meth:`~PackagedRegistry.load`
(:func:`resolve`) loads them. A file whose ``version`` is not a plain value is left to the loader,
which says what is wrong with it.

Registries are validated when they are first used to canonicalise: a registry that changed since
the last loading run always is (its version differs, so the run re-canonicalises the stored rows).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from evalhouse.curation.registry_version import FILES, TOKENS, VERSIONED, content_hash, read_file, version_text

if TYPE_CHECKING:
    from evalhouse.curation.registry import Registry


@cache
def packaged_version() -> str:
    """:attr:`Registry.version` of the packaged registries, from their bytes and ``version`` fields.

    A file that is not YAML, not a mapping, or whose ``version`` is not an integer
    (model_tokens.yaml: any value) is one :func:`~evalhouse.curation.registry.load_registry`
    refuses or reads differently: the version is then the loaded registry's, or its error.
    """
    from evalhouse.common.yamls import load_package_yaml  # noqa: PLC0415 - YAML only when a version is read

    raws = [read_file(name) for name in FILES]
    try:
        docs = [load_package_yaml(raw) for raw in raws]
    except Exception:  # noqa: BLE001 - unreadable YAML: the loader words the error
        return _loaded_version()
    versions: dict[str, int | str] = {}
    for name, doc in zip(FILES, docs, strict=True):
        if not isinstance(doc, dict):
            return _loaded_version()
        if name == TOKENS:
            if doc:
                versions["model_tokens"] = str(doc.get("version", "?"))
        elif type(doc.get("version")) is int:
            versions[VERSIONED[name]] = doc["version"]
        else:
            return _loaded_version()
    return version_text(versions, content_hash(raws))


def _loaded_version() -> str:
    from evalhouse.curation.registry import load_registry  # noqa: PLC0415 - pydantic only when needed

    return load_registry().version


@dataclass(frozen=True)
class PackagedRegistry:
    """The packaged registries before anything needs more of them than their version."""

    @property
    def version(self) -> str:
        return packaged_version()

    def load(self) -> Registry:
        from evalhouse.curation.registry import load_registry  # noqa: PLC0415 - pydantic only when needed

        return load_registry()


#: The packaged registries, not yet loaded.
PACKAGED = PackagedRegistry()


def resolve(registry: Registry | PackagedRegistry) -> Registry:
    """The registry itself: loaded, when ``registry`` stands for the packaged ones."""
    return registry.load() if isinstance(registry, PackagedRegistry) else registry
