"""Terminal-Bench: the site's JSON ``leaderboard-read`` endpoint, one request per version.

``GET /api/leaderboard-read?leaderboard=terminal-bench&version=<v>`` returns
``{leaderboard, version, generated_at, rows:[{rank, agent, agent_org, model, model_org, date,
accuracy, ci_half_width, n_trials, verified}]}``: accuracy in percent with the 95% CI as a
half-width (turned into absolute bounds here). Versions 2.0 and 3.0 are different task sets and
different registry benchmarks. One record per (agent, model) row; the agent is part of the
cell (setup ``agent``). ``generated_at`` is the response time and never reaches a record, so an
unchanged board re-read is ``unchanged``. Rows are agent teams' submissions run on the
Terminal-Bench harness: ``community``, or ``model_developer`` when the agent's organisation is
the model's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from evalhouse.ingest.fetch import FetchRequest
from evalhouse.ingest.source import EmptyPlaceholder, FetchMeta, LayoutChanged, ParseError, SourceSpec, SourceState
from evalhouse.ingest.sources import _common as common
from evalhouse.ingest.sources._board import Board, Model
from evalhouse.ingest.sources._common import CellError
from evalhouse.schema.records import SOURCE_RECORD_ID, ParseFailure, ParseItem

ENDPOINT = "https://www.tbench.ai/api/leaderboard-read"
VERSIONS = ("2.0", "3.0")
REQUIRED = ("agent", "model", "accuracy")

SOURCE = SourceSpec(
    key="terminal-bench",
    name="Terminal-Bench leaderboard",
    kind="api",
    tier=1,
    organisation="Terminal-Bench (Stanford, Laude Institute)",
    homepage="https://www.tbench.ai/leaderboard",
    default_urls=tuple(f"{ENDPOINT}?leaderboard=terminal-bench&version={v}" for v in VERSIONS),
    cadence="daily",
    parser_version="terminal-bench/1",
    collection="terminal-bench",
    description=(
        "Terminal-Bench 2.0 and 3.0 agent x model accuracies with 95% CI half-widths, from the site's JSON endpoint."
    ),
    licence="Terminal-Bench leaderboard (Apache-2.0 project)",
)
BOARD = Board(SOURCE, "community", "terminal-bench-harness")


def plan(state: SourceState) -> list[FetchRequest]:
    return [
        FetchRequest(url=ENDPOINT, params={"leaderboard": "terminal-bench", "version": v}, label=f"version:{v}")
        for v in VERSIONS
    ]


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    try:
        doc = json.loads(common.decode_text(body, "the Terminal-Bench response"))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ParseError(f"the Terminal-Bench response is not JSON: {exc}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
        raise LayoutChanged("layout changed: the Terminal-Bench response has no 'rows' list")
    version = str(doc.get("version") or (meta.label or "").partition(":")[2])
    if not version:
        raise LayoutChanged("layout changed: the Terminal-Bench response names no version (and its label none)")
    if not doc["rows"]:
        raise EmptyPlaceholder(f"empty placeholder: Terminal-Bench {version} lists no rows")
    for i, row in enumerate(doc["rows"]):
        yield from _row(row, version, f"{version} rows[{i}]", meta)


def _row(row: Any, version: str, locator: str, meta: FetchMeta) -> Iterator[ParseItem]:
    payload = common.row_payload(row if isinstance(row, dict) else {"value": row})
    if not isinstance(row, dict) or any(not row.get(k) and row.get(k) != 0 for k in REQUIRED):
        yield ParseFailure(locator, f"a row needs {', '.join(REQUIRED)}", payload)
        return
    try:
        score = common.parse_number(row["accuracy"], "percent")
        half = row.get("ci_half_width")
        half = None if half in (None, "", "N/A") else common.parse_number(half, "percent")
    except CellError as exc:
        yield ParseFailure(locator, str(exc), payload)
        return
    uncertainty: dict[str, Any] = {}
    if half is not None:
        uncertainty.update(common.confidence_interval(score - half, score + half))
    if row.get("n_trials"):
        uncertainty["num_samples"] = int(row["n_trials"])
    agent = str(row["agent"])
    result = BOARD.result(
        meta.url,
        dataset_name=f"Terminal-Bench {version}",
        metric_id="pass_rate",
        metric_name="accuracy",
        unit="percent",
        bounds=(0.0, 100.0),
        score=score,
        uncertainty=uncertainty or None,
        details={SOURCE_RECORD_ID: f"{agent}|{row['model']}", "rank": str(row.get("rank", ""))},
        setup={"agent": agent},
    )
    org = _text(row, "model_org")
    own = org is not None and org.casefold() == (_text(row, "agent_org") or "").casefold()
    facts: Mapping[str, str | None] = {
        "agent": agent,
        "agent_org": _text(row, "agent_org"),
        "verified": _text(row, "verified"),
    }
    yield BOARD.record(
        meta,
        Model(
            id=str(row["model"]),
            name=str(row["model"]),
            developer=org,
            details=facts,
            deployment_type="externally_managed",
        ),
        [result],
        (locator, payload),
        evaluated_by="model_developer" if own else None,
        original_source=_text(row, "agent_org"),
        evaluation_timestamp=_text(row, "date"),
    )


def _text(row: Mapping[str, Any], key: str) -> str | None:
    return common.fact_text(row.get(key))
