"""What needs no warehouse: the source catalog, replay mirrors, model names, the curation rules,
and snapshot folders (verified, compared, opened).

Like :class:`~evalhouse.app.house.House`, every function loads the layers it uses when called.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalhouse.app.results import Report
from evalhouse.errors import InputError

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

    from evalhouse.curation.benchmark_links import BenchmarkLinks
    from evalhouse.curation.setup_policy import SetupPolicy
    from evalhouse.ingest.source import SourceSpec
    from evalhouse.warehouse.snapshot.diff import SnapshotDiff
    from evalhouse.warehouse.snapshot.verify import VerifyReport

PathLike = str | os.PathLike[str]

#: The checkout this package runs from (an editable install): ``../shared`` is beside it.
CHECKOUT = Path(__file__).resolve().parents[2]
#: Where the pinned datasets are by default: the repository's ``../shared``.
DEFAULT_SHARED = CHECKOUT.parent / "shared"
#: Where the sources' recorded real payloads are by default: the repository's ``tests/fixtures``.
DEFAULT_FIXTURES = CHECKOUT / "tests" / "fixtures"


def sources() -> list[SourceSpec]:
    """Every catalogued source's spec: key, kind, tier, organisation, default URLs, cadence, the
    environment variables it reads, and the recorded real payload its parser was verified on
    (``verified_on``; None: a plain refresh leaves it out)."""
    from evalhouse.ingest.catalog import catalog

    return [m.SOURCE for m in catalog().values()]


def mirror_from_shared(
    directory: PathLike, *, shared: PathLike = DEFAULT_SHARED, fixtures: PathLike = DEFAULT_FIXTURES
) -> dict[Any, Path]:
    """Build a replay mirror of every verified source from its recorded real payloads (Epoch's
    export and the AA page from the pinned datasets in ``shared``, the others from ``fixtures``);
    ``{url: file}``. ``House.refresh(mirror=directory)`` then loads them through the real fetch,
    parse and load path."""
    from evalhouse.ingest.pinned import mirror_from_shared as build

    return build(Path(shared), Path(directory), Path(fixtures))


def resolve_model(
    name: str,
    source: str | None = None,
    developer: str | None = None,
    *,
    source_id: str | None = None,
    released: str | None = None,
    observed: dt.date | str | None = None,
) -> dict[str, Any]:
    """Any model name -> ``{"input", "source", "configuration", "base_model", "family", "flags",
    "setup", "links", ...}``, in the warehouse or not.

    ``source`` scopes generic names ('Ours') to a source; ``developer`` is the one the source
    states; ``source_id`` the source's own id beside a display name; ``released`` the release date
    it states; ``observed`` the day it ran the model (which snapshot an alias meant)."""
    from evalhouse.curation.identity import describe_name
    from evalhouse.curation.names import NameHints
    from evalhouse.curation.registry import load_registry

    if isinstance(observed, str):
        try:
            observed = dt.date.fromisoformat(observed)
        except ValueError:
            raise InputError(f"--observed {observed!r} is not a date (YYYY-MM-DD)") from None
    hints = NameHints(source_id=source_id, release_date=released, observed_on=observed)
    return describe_name(name, load_registry(), source=source, developer=developer, hints=hints)


def setup_policy() -> SetupPolicy:
    """Which setup fields define a cell and which are attributes of a candidate, each with its
    reason (``registries/setup_policy.yaml``; ``.as_dict()``)."""
    from evalhouse.curation.registry import load_registry

    policy = load_registry().setup_policy
    assert policy is not None
    return policy


def benchmark_links() -> BenchmarkLinks:
    """Benchmarks a source reports under its own namespace, linked to the registry's ('same_as')
    or kept apart ('apart_from'), with the evidence (``registries/benchmark_links.yaml``;
    ``.links``, ``.as_dict()``)."""
    from evalhouse.curation.registry import load_registry

    links = load_registry().benchmark_links
    assert links is not None
    return links


def verify_snapshot(directory: PathLike, *, expect_id: str | None = None) -> VerifyReport:
    """Re-hash every file of a snapshot folder against its manifest (``.ok``, ``.problems()``);
    ``expect_id``: the id (or a 6+ hex digit prefix) an analysis recorded. A folder that is not a
    snapshot is an :class:`~evalhouse.errors.InputError`. ``House.verify_snapshot`` also checks
    a prefix against the snapshots its warehouse recorded."""
    from evalhouse.warehouse.snapshot.verify import verify_snapshot as verify

    return verify(directory, expect_id=expect_id)


def diff_snapshots(a: PathLike, b: PathLike, *, limit: int | None = 20) -> SnapshotDiff:
    """Rows added, removed and changed per table and cells (config x benchmark x metric x setup)
    between snapshots ``a`` and ``b`` (``limit`` examples per kind, None: all; counts exact);
    ``.subset_holds``: A ⊆ B with every shared cell unchanged, and ``.verdict`` says it."""
    from evalhouse.warehouse.snapshot.diff import diff_snapshots as diff

    return diff(a, b, limit=limit or None)


def open_snapshot(
    directory: PathLike, *, verify: bool = True, expect_id: str | None = None
) -> duckdb.DuckDBPyConnection:
    """A verified, read-only DuckDB connection over a snapshot folder, with the warehouse's views.

    ``expect_id``: the snapshot id an analysis recorded; any other snapshot is refused."""
    from evalhouse.warehouse.snapshot.reader import open_snapshot as open_

    return open_(directory, verify=verify, expect_id=expect_id)


def snapshot_frame(con: duckdb.DuckDBPyConnection, sql: str) -> pd.DataFrame:
    """A query on a snapshot connection as a DataFrame whose ``attrs["snapshot_id"]`` pins it."""
    from evalhouse.warehouse.snapshot.reader import snapshot_frame as frame

    return frame(con, sql)


def describe_snapshot(directory: PathLike, *, expect_id: str | None = None) -> Report:
    """What a verified snapshot holds: ``{"snapshot_id", "name", "created_at", "rows"}`` (rows per
    table and view; None for the views built when it is opened)."""
    from evalhouse.warehouse.snapshot.verify import load_manifest, require_verified

    require_verified(directory, expect_id=expect_id)
    manifest, _ = load_manifest(directory)
    rows = {n: e.get("rows") for n, e in manifest["tables"].items()}
    return Report(
        snapshot_id=manifest["snapshot_id"], name=manifest["name"], created_at=manifest["created_at"], rows=rows
    )
