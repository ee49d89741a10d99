"""One source's parser over pinned payloads (local files or a URL), recorded like any fetch."""

from __future__ import annotations

from pathlib import Path

from evalhouse.ingest.catalog import get_source
from evalhouse.ingest.fetch import FetchError, FetchRequest
from evalhouse.pipeline import items_ingest, ledger
from evalhouse.pipeline.refresh import RefreshOptions, resolve_key
from evalhouse.pipeline.source_run import SourceRun, store_fetch
from evalhouse.pipeline.targets import refresh_targets
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw_store import RawStore


def ingest_file(
    wh: Warehouse,
    store: RawStore,
    key: str,
    location: str,
    options: RefreshOptions | None = None,
) -> ledger.RunResult:
    """Run ``key``'s parser over ``location`` (a path or URL): bytes stored first, one ``ingest_run`` row.

    ``options`` gives the registry, the checkpoint (``after_load``) and the HTTP client factory.
    A location that is neither (a Hub repository id, an arXiv id) goes to the source's ``locate``
    and is fetched through the normal client as a one-target run of :mod:`.targets`.
    """
    options = options or RefreshOptions()
    module = get_source(resolve_key(key))
    locate = getattr(module, "locate", None)
    if not Path(location).exists() and locate is not None and locate(location) is not None:
        return refresh_targets(wh, store, module.SOURCE.key, [location], options)
    run = SourceRun(wh, module, "ingest", options.registry, after_load=options.after_load, location=location)
    if items_ingest.is_item_source(module) and Path(location).exists():
        # harness logs: local run files or directories, bundled, without the HTTP client's size cap
        return items_ingest.ingest_item_path(wh, store, module, location, run.ctx)
    path = Path(location)
    request = FetchRequest(path.resolve().as_uri() if path.exists() else location, label=path.name)
    with options.client_factory(None) as client:
        try:
            result = client.fetch(request)
        except FetchError as exc:
            return run.record("failed", [], f"cannot read {location}: {exc}")
    fetched = [store_fetch(store, module.SOURCE.key, request, result, run.run_id)]
    entries = [fetched[0].entry]
    items = run.parse(fetched, entries)
    if isinstance(items, ledger.RunResult):
        return items
    return run.load(entries, items)


def ingest_paths(
    wh: Warehouse,
    store: RawStore,
    key: str,
    locations: list[str],
    options: RefreshOptions | None = None,
) -> ledger.RunResult:
    """One run over several ``locations``: a harness log's files and run directories are read
    from disk (:func:`~evalhouse.pipeline.items_ingest.ingest_item_paths`); for a source that
    fetches by id they are its targets (:func:`~evalhouse.pipeline.targets.refresh_targets`)."""
    options = options or RefreshOptions()
    module = get_source(resolve_key(key))
    if items_ingest.is_item_source(module):
        run = SourceRun(wh, module, "ingest", options.registry, after_load=options.after_load, location=locations)
        return items_ingest.ingest_item_paths(wh, store, module, locations, run.ctx)
    return refresh_targets(wh, store, module.SOURCE.key, locations, options)
