"""The registries' version string and content hash, from the files' bytes (no validation, no pydantic).

:attr:`evalhouse.curation.registry.Registry.version` and
:func:`evalhouse.curation.packaged_registry.packaged_version` both build it here, so the version a
quiet night records without loading the registries is the one a load records.
"""

from __future__ import annotations

import hashlib
from importlib import resources

#: The registry files, in the order their bytes make the content hash.
FILES = ("metrics.yaml", "units.yaml", "benchmarks.yaml", "developers.yaml", "evidence_kinds.yaml", "model_tokens.yaml")
#: Files added after the first six, hashed after them (so the six keep their order).
FILES += ("model_snapshots.yaml", "setup_policy.yaml", "benchmark_links.yaml")
#: Files whose top-level ``version`` is recorded (model_tokens.yaml only when it holds anything).
VERSIONED = {
    "evidence_kinds.yaml": "evidence_kinds",
    "metrics.yaml": "metrics",
    "units.yaml": "units",
    "benchmarks.yaml": "benchmarks",
    "developers.yaml": "developers",
    "model_snapshots.yaml": "model_snapshots",
    "setup_policy.yaml": "setup_policy",
    "benchmark_links.yaml": "benchmark_links",
}
TOKENS = "model_tokens.yaml"


def read_file(name: str) -> bytes:
    return resources.files("evalhouse.curation.registries").joinpath(name).read_bytes()


def content_hash(raws: list[bytes]) -> str:
    """The registries' content hash: sha256 over each file's sha256, in :data:`FILES` order."""
    return hashlib.sha256(b"".join(hashlib.sha256(raw).digest() for raw in raws)).hexdigest()


def version_text(versions: dict[str, int | str], content_sha256: str) -> str:
    """``benchmarks@4+developers@4+…#<12 hex>``: what a run records as its registry version."""
    parts = "+".join(f"{k}@{v}" for k, v in sorted(versions.items()))
    return f"{parts}#{content_sha256[:12]}"
