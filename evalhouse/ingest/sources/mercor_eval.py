"""Mercor Evaluation Exports API (APEX-Agents and others): benchmarks + paginated leaderboards.

``GET /benchmarks`` and ``GET /leaderboards?limit=<n>&offset=<k>`` (header ``X-API-Key``),
each an envelope with ``schemaVersion == "1.0"`` (anything else fails the payload). Pages are
followed until ``offset + len(rows) >= total`` (:func:`follow`). A row is one evaluation of one
model configuration (agent, reasoning effort) with ``passAt1``/``passAt8`` (with absolute 95%
CIs), ``passHat8``, ``meanScore`` and ``perDomainPassAt1`` - all proportions
(source-formats.md §C.25). Mercor built the benchmark and runs every model: benchmark creator.
``dataAsOf`` is the export time and never reaches a record.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from typing import Any

from evalhouse.ingest.fetch import FetchRequest
from evalhouse.ingest.source import EmptyPlaceholder, FetchMeta, LayoutChanged, ParseError, SourceSpec, SourceState
from evalhouse.ingest.sources import _common as common
from evalhouse.ingest.sources._board import Board, Model
from evalhouse.ingest.sources._common import CellError
from evalhouse.schema.records import SOURCE_RECORD_ID, ParseFailure, ParseItem

BASE = "https://coil.mercor.com/external/evals/v1"
KEY_ENV = "EVALHOUSE_MERCOR_API_KEY"
PAGE = 500
PROVIDERS = {"gemini": "google", "google": "google", "moonshot-ai": "moonshot", "moonshotai": "moonshot"}

SOURCE = SourceSpec(
    key="mercor-eval",
    name="Mercor evaluation exports",
    kind="api",
    tier=1,
    organisation="Mercor",
    homepage="https://www.mercor.com/apex/",
    default_urls=(f"{BASE}/benchmarks", f"{BASE}/leaderboards"),
    cadence="daily",
    parser_version="mercor-eval/1",
    collection="mercor-eval",
    description=(
        "Mercor's own runs of APEX-Agents (and its other benchmarks): pass@1/pass@8 with CIs, pass^8, "
        "mean score, per domain."
    ),
    required_env=(KEY_ENV,),
    licence="Mercor evaluation exports (terms of the API key)",
)
BOARD = Board(SOURCE, "benchmark_creator", "mercor-apex")


def plan(state: SourceState) -> list[FetchRequest]:
    auth = {"headers": {"X-API-Key": state.env.get(KEY_ENV, "")}, "secret_headers": frozenset({"x-api-key"})}
    return [
        FetchRequest(url=f"{BASE}/benchmarks", label="benchmarks", **auth),
        FetchRequest(
            url=f"{BASE}/leaderboards", params={"limit": str(PAGE), "offset": "0"}, label="leaderboards", **auth
        ),
    ]


def follow(body: bytes, *, meta: FetchMeta) -> list[FetchRequest]:
    """The next leaderboards page while ``offset + rows < total`` (the refresh carries the key over)."""
    if meta.label != "leaderboards":
        return []
    doc = _envelope(body)
    offset, rows, total = int(doc.get("offset", 0)), len(doc.get("rows") or []), int(doc.get("total", 0))
    if rows and offset + rows < total:
        params = {"limit": str(PAGE), "offset": str(offset + rows)}
        return [FetchRequest(url=f"{BASE}/leaderboards", params=params, label="leaderboards")]
    return []


def _envelope(body: bytes) -> Mapping[str, Any]:
    try:
        doc = json.loads(common.decode_text(body, "the Mercor export"))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ParseError(f"the Mercor export is not JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise ParseError("the Mercor export is not a JSON object")
    return doc


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    doc = _envelope(body)
    envelopes = [doc[k] for k in ("benchmarks", "leaderboards") if isinstance(doc.get(k), dict)] or [doc]
    for env in envelopes:
        if env.get("schemaVersion") != "1.0":
            raise LayoutChanged(f"layout changed: Mercor schemaVersion {env.get('schemaVersion')!r}, expected '1.0'")
        if "rows" in env:
            if not env["rows"] and int(env.get("total", 0)) > int(env.get("offset", 0)):
                raise EmptyPlaceholder(
                    f"empty placeholder: an empty page at offset {env.get('offset')} of {env.get('total')}"
                )
            for i, row in enumerate(env["rows"]):
                yield from _row(row, f"rows[{int(env.get('offset', 0)) + i}]", meta)
        elif not isinstance(env.get("benchmarks"), list):
            raise LayoutChanged("layout changed: a Mercor envelope with neither rows nor benchmarks")


def _row(row: Mapping[str, Any], locator: str, meta: FetchMeta) -> Iterator[ParseItem]:
    payload = common.row_payload(row)
    bench = str((row.get("benchmark") or {}).get("name") or "")
    metrics = row.get("metrics") or {}
    results: list[dict[str, Any]] = []
    cells: list[tuple[str, Any, Any]] = [
        ("pass_at_k.k1", metrics.get("passAt1"), 1),
        ("pass_at_k.k8", metrics.get("passAt8"), 8),
        ("score.pass_hat_8", metrics.get("passHat8"), None),
        ("score", metrics.get("meanScore"), None),
    ]
    cells += [(f"pass_at_k.k1.{common.slugify(d)}", v, 1) for d, v in (metrics.get("perDomainPassAt1") or {}).items()]
    config = (row.get("model") or {}).get("config") or {}
    for metric, cell, _k in cells:
        value = cell.get("value") if isinstance(cell, dict) else cell
        if value is None:
            continue
        try:
            score = common.parse_number(value, "proportion")
        except CellError as exc:
            yield ParseFailure(f"{locator}.{metric}", str(exc), payload)
            continue
        ci = _interval(cell.get("ci95")) if isinstance(cell, dict) else None
        results.append(
            BOARD.result(
                meta.url,
                dataset_name=bench,
                metric_id=metric if not metric.startswith("pass_at_k") else metric.replace("pass_at_k", "pass_rate"),
                metric_name=metric,
                unit="proportion",
                bounds=(0.0, 1.0),
                score=score,
                uncertainty=common.confidence_interval(*ci) if ci else None,
                details={SOURCE_RECORD_ID: str(row.get("evaluationId", ""))},
                setup={"agent": str(config.get("agentName") or "unknown")},
            )
        )
    name = str((row.get("model") or {}).get("name") or config.get("model") or "")
    provider = str(config.get("provider") or "")
    developer = name.split("/", maxsplit=1)[0] if "/" in name else PROVIDERS.get(provider, provider) or None
    facts = {
        k: common.fact_text(config.get(k))
        for k in ("reasoningEffort", "verbosity", "temperature", "maxSteps", "agentConfigId")
    }
    yield BOARD.record(
        meta,
        Model(
            id=f"{developer}/{name}" if developer and "/" not in name else name,
            name=name,
            developer=developer,
            details={**facts, "inference_platform": provider or None},
            deployment_type="externally_managed",
        ),
        results,
        (locator, payload),
        evaluation_timestamp=common.fact_text(row.get("evaluatedAt")),
    )


def _interval(ci: Any) -> tuple[float, float] | None:
    """A 95% interval's ``(lower, upper)`` when the payload gives both as finite numbers, else None."""
    if not isinstance(ci, dict):
        return None
    bounds = ci.get("lower"), ci.get("upper")
    if all(isinstance(b, int | float) and not isinstance(b, bool) and math.isfinite(b) for b in bounds):
        return float(bounds[0]), float(bounds[1])
    return None
