"""One source's parser over pinned payloads (local files or a URL), recorded like any fetch."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from evalhouse.ingest.catalog import get_source
from evalhouse.ingest.fetch import FetchError, FetchRequest
from evalhouse.ingest.source import ParseError
from evalhouse.pipeline import guards, items_ingest
from evalhouse.pipeline.refresh import (
    RefreshOptions,
    previous_figures,
    record_waivers,
    refresh_source,
    resolve_key,
    saved_path,
    site_root,
    verdict_json,
)
from evalhouse.pipeline.source_run import Fetched, SourceRun, store_fetch
from evalhouse.pipeline.targets import refresh_targets
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.load import ledger
from evalhouse.warehouse.raw.store import RawStore


def ingest_file(
    wh: Warehouse,
    store: RawStore,
    key: str,
    location: str,
    options: RefreshOptions | None = None,
) -> ledger.RunResult:
    """Run ``key``'s parser over ``location`` (a path or URL): bytes stored first, judged by the
    refresh's drift guards, one ``ingest_run`` row.

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
    if path.is_dir():
        return ingest_saved_site(wh, store, run, path, options)
    request = FetchRequest(path.resolve().as_uri() if path.exists() else location, label=path.name)
    with options.client_factory(None) as client:
        try:
            result = client.fetch(request)
        except FetchError as exc:
            return run.record("failed", [], f"cannot read {location}: {exc}")
    fetched = store_fetch(store, module.SOURCE.key, request, result, run.run_id)
    return _judged_load(wh, run, fetched, options)


def _judged_load(wh: Warehouse, run: SourceRun, fetched: Fetched, options: RefreshOptions) -> ledger.RunResult:
    """Parse, judge with the refresh's drift guards, load. The payload is compared with the last
    loading run of the source that read a payload of the same name (one CSV of Epoch's hub is
    compared with the same CSV, never with another benchmark's).

    A payload the guards fail (values rescaled x100, most rows quarantined, a shrink) loads
    nothing and fails the run with the guard's reason, as the nightly refresh would; a person
    waives it for one run with ``--accept-drift`` (recorded as a decision)."""
    key, entries = run.spec.key, [fetched.entry]
    try:
        page = guards.Page(fetched.entry.url, fetched.body, fetched.meta.content_type, run.parse_one(fetched))
    except ParseError as exc:
        page = guards.Page(fetched.entry.url, fetched.body, fetched.meta.content_type, [], exc)
    evidence = guards.Evidence(
        key,
        [page],
        [],
        previous_figures(wh, ledger.last_loading_run(wh.con, key, label=fetched.entry.label)),
        guards.policy_for(run.module),
        accept_drift=key in options.accept_drift,
        waiver=f"ingest {key} PATH --accept-drift",
        registry=options.registry,
        declared_benchmarks=run.spec.declares_benchmarks,
    )
    verdicts = guards.evaluate(evidence)
    decisive = guards.outcome(verdicts)
    report = {"figures": evidence.figures(), "guards": [verdict_json(v) for v in verdicts]}
    if decisive is not None and decisive.outcome == "failed":
        return run.record("failed", entries, decisive.reason, guard=decisive.guard, **report)
    record_waivers(run, [v for v in verdicts if v.outcome == "accepted"])
    return run.load(entries, page.items, degraded=decisive.reason if decisive is not None else None, **report)


def ingest_saved_site(
    wh: Warehouse, store: RawStore, run: SourceRun, folder: Path, options: RefreshOptions
) -> ledger.RunResult:
    """A saved copy of a source's site: its pages read from ``folder`` as a refresh reads them from
    the live site (the start pages the source plans, then the links they hold), with the same
    drift guards; a linked page the copy lacks is a missing page. ``run`` stands for the run when
    the folder cannot be read as the site at all."""
    from evalhouse.ingest.source import SourceState  # noqa: PLC0415 - only a folder needs it

    module = run.module
    key = module.SOURCE.key
    if not module.SOURCE.default_urls:
        return run.record("failed", [], f"{folder} is a folder: {key} reads one file or URL per run; give a file")
    planned = module.plan(SourceState(env=dict(os.environ if options.env is None else options.env)))
    root = site_root(planned)
    names = [saved_path(r.url, root, Path()).as_posix() for r in planned]
    if not any(saved_path(r.url, root, folder).is_file() for r in planned):
        return run.record(
            "failed",
            [],
            f"{folder} is a folder without any of {key}'s start pages ({', '.join(names)}): give the folder of a saved"
            f" copy of its site ({root}), or one of its payload files",
        )
    return refresh_source(wh, store, module, replace(options, saved_site=folder))


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
