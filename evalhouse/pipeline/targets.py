"""Sources fetched by name: one run over repository ids or arXiv ids, each target on its own.

Model cards and papers have no URL of their own to refresh: a caller names what to fetch (a list,
or the models the other sources name) and the source's ``locate(target, state)`` turns each name
into a request. A target that cannot be fetched, or whose payload is unreadable as a whole, is a
quarantined failure naming it; the others still load, and the run fails only when every one did.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from evalhouse.errors import InputError
from evalhouse.ingest.catalog import get_source
from evalhouse.ingest.fetch import FetchError
from evalhouse.ingest.source import ParseError
from evalhouse.pipeline.refresh import RefreshOptions, resolve_key, source_state
from evalhouse.pipeline.source_run import Fetched, SourceRun, store_fetch
from evalhouse.schema.records import ParsedRecord, ParseFailure, ParseItem
from evalhouse.warehouse import history
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.load import ledger
from evalhouse.warehouse.raw.store import RawStore


def refresh_targets(
    wh: Warehouse, store: RawStore, key: str, targets: list[str], options: RefreshOptions | None = None
) -> ledger.RunResult:
    """One ``ingest`` run of ``key`` over ``targets``; conditional GETs reuse what each URL's last fetch left."""
    options = options or RefreshOptions()
    module = get_source(resolve_key(key))
    locate = getattr(module, "locate", None)
    if locate is None:
        raise InputError(
            f"source {key!r} fetches nothing by id, and reads one file or URL per run: "
            f"'evalhouse ingest {key} PATH' for each file (give no --targets or --named)"
        )
    wanted = list(dict.fromkeys(t.strip() for t in targets if t.strip()))
    run = SourceRun(wh, module, "ingest", options.registry, after_load=options.after_load, mirror=options.mirror)
    state = source_state(wh, module.SOURCE.key, dict(os.environ if options.env is None else options.env))
    fetched: list[Fetched] = []
    items: list[ParseItem] = []
    not_modified = 0
    with options.client_factory(options.mirror) as client:
        for target in wanted:
            request = locate(target, state)
            if request is None:
                items.append(ParseFailure(target, f"{target!r} names nothing {module.SOURCE.key} can fetch"))
                continue
            try:
                result = client.fetch(request)
            except FetchError as exc:
                items.append(ParseFailure(target, f"fetch failed ({exc.kind}): {exc}"))
                continue
            if result.not_modified:
                not_modified += 1
                continue
            fetched.append(store_fetch(store, module.SOURCE.key, request, result, run.run_id))
    entries = [f.entry for f in fetched]
    for f in fetched:
        try:
            items.extend(run.parse_one(f))
        except ParseError as exc:
            items.append(ParseFailure(f.entry.url, f"payload unreadable: {exc}", raw_sha256=f.entry.sha256))
    if not items and not_modified:
        return run.record("unchanged", entries, reason="304 Not Modified for every target")
    if not any(isinstance(i, ParsedRecord) for i in items):
        reasons = "; ".join(dict.fromkeys(i.reason for i in items if isinstance(i, ParseFailure))) or "no targets"
        return run.record("failed", entries, f"no target loaded: {reasons}")
    return run.load(entries, items, requests=len(wanted), not_modified=not_modified)


def named_models(wh: Warehouse, key: str) -> list[str]:
    """The model identifiers other sources name that ``key`` can fetch (its ``targets_from_model_ids``)."""
    module = get_source(resolve_key(key))
    pick = getattr(module, "targets_from_model_ids", None)
    if pick is None:
        raise InputError(f"source {key!r} cannot fetch the models other sources name")
    return pick(history.named_model_ids(wh.con, module.SOURCE.key))


def read_targets(targets: str | os.PathLike[str] | Iterable[str] | None) -> list[str]:
    """Ids to fetch: a list as it is, or a file of one id per line (``#`` starts a comment, blank
    lines are skipped); an unreadable file is an :class:`~evalhouse.errors.InputError`."""
    if targets is None:
        return []
    if not isinstance(targets, str | os.PathLike):
        return [str(t) for t in targets]
    path = Path(targets)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read --targets {path}: {exc.strerror or exc}") from exc
    return [line.split("#", 1)[0].strip() for line in text.splitlines() if line.split("#", 1)[0].strip()]
