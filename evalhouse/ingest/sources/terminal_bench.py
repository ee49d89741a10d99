"""Terminal-Bench: the Harbor Hub ``leaderboard-read`` function tbench.ai's own pages call, per version.

The site (harbor-framework/terminal-bench-website, ``lib/leaderboard.ts``) POSTs
``{"package": <dataset package>, "name": <leaderboard>}`` to
``https://ofhuhcpkvzjlejydnvyd.supabase.co/functions/v1/leaderboard-read`` (no key) for each version
its picker lists: 4.0 ``terminal-bench/terminal-bench`` ``4-0-0``, 3.0 the same package ``3-0-0``,
2.1 ``terminal-bench/terminal-bench-2-1`` ``main``, 2.0 ``terminal-bench/terminal-bench-2`` ``2-0``.
The answer is ``{leaderboard{id, package, name, title, metadata_schema, metrics_schema, columns,
rank_by, ...}, rows[...], pagination{total, page, page_size, total_pages}}``; a row is ``{id,
leaderboard_id, rank, status ("display" | "hide"), n_trials, metadata{date, display_date,
agent_display, model_display, agent_org, model_org (each ``{url, label}``), reasoning_effort},
metrics{accuracy (percent), accuracy_ci95_half_width, n_trials, successes, pass_at_2..5,
total_cost_usd, total_tokens, ... and their display_* strings}, created_at, updated_at}``.

* One record per row; the agent and the reasoning effort are part of the cell (setup ``agent``,
  ``reasoning_effort``): one model under five efforts is five cells, never one.
* The accuracy's 95% CI half-width becomes absolute bounds; a standard error (``accuracy_stderr``,
  on older boards) is kept as one; ``n_trials`` is the cell's sample count. ``pass_at_2`` …
  ``pass_at_5`` (proportions) and ``total_cost_usd`` are cells of their own; successes, token
  counts, the mean trial duration and the displayed cost (which says when a cost covers only part
  of the trials) are details of the accuracy cell.
* A row the board hides (``status: hide``) is not a shown score: it is quarantined with that reason
  (counted and kept with its payload, so a board with hidden rows ends ``partial``), never loaded.
* Each answer must describe the board that was asked for (its ``package`` and ``name``), so a
  version's rows can never land in another version's benchmark; a further page the answer announces
  (``pagination``) is asked for with the same body and its page number.
* Rows are agent teams' submissions run on the Terminal-Bench harness: ``community``, or
  ``model_developer`` when the agent's organisation is the model's.

Verified on a real answer of the 4.0 board (27 rows, recorded 2026-09-21). The current board, 4.0,
is read by default; ``EVALHOUSE_TERMINAL_BENCH_BOARDS=4.0,3.0,2.1,2.0`` reads the older boards too
(the same function and row format; no real answer of those boards is recorded). A name evalhouse does
not know fails the run, naming it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from evalhouse.ingest.fetch import FetchRequest
from evalhouse.ingest.source import (
    EmptyPlaceholder,
    FetchMeta,
    LayoutChanged,
    ParseError,
    Recording,
    SourceSpec,
    SourceState,
)
from evalhouse.ingest.sources import _common as common
from evalhouse.ingest.sources._board import Board, Model
from evalhouse.ingest.sources._common import CellError
from evalhouse.schema.records import SOURCE_RECORD_ID, ParseFailure, ParseItem

ENDPOINT = "https://ofhuhcpkvzjlejydnvyd.supabase.co/functions/v1/leaderboard-read"
#: version -> (dataset package, leaderboard name), as the site's version picker asks for them
BOARDS: Mapping[str, tuple[str, str]] = {
    "4.0": ("terminal-bench/terminal-bench", "4-0-0"),
    "3.0": ("terminal-bench/terminal-bench", "3-0-0"),
    "2.1": ("terminal-bench/terminal-bench-2-1", "main"),
    "2.0": ("terminal-bench/terminal-bench-2", "2-0"),
}
#: metrics beside the accuracy that are cells of their own: pass@k over the trials, and the run's cost
OTHER_CELLS: Mapping[str, tuple[str, str, tuple[float | str, float | str], bool]] = {
    **{f"pass_at_{k}": (f"pass_rate.pass_at_{k}", "proportion", (0.0, 1.0), False) for k in range(2, 6)},
    "total_cost_usd": ("cost", "usd", (0.0, "Infinity"), True),
}
#: run facts kept with the accuracy cell (not measurements of capability)
RUN_FACTS = (
    "successes",
    "total_tokens",
    "output_tokens",
    "cached_input_tokens",
    "uncached_input_tokens",
    "avg_trial_duration_sec",
    "display_cost",
)
BOARDS_ENV = "EVALHOUSE_TERMINAL_BENCH_BOARDS"
#: the board read by default: the current one, verified on a recorded real answer
DEFAULT_BOARDS = ("4.0",)
_RECORDED = "fixtures:terminal-bench/leaderboard-read_4-0-0.json"

SOURCE = SourceSpec(
    key="terminal-bench",
    name="Terminal-Bench leaderboard",
    kind="api",
    tier=1,
    organisation="Terminal-Bench (Stanford, Laude Institute)",
    homepage="https://www.tbench.ai/leaderboard",
    default_urls=(ENDPOINT,),
    cadence="daily",
    parser_version="terminal-bench/2",
    collection="terminal-bench",
    description=(
        "Terminal-Bench 4.0 (and, with EVALHOUSE_TERMINAL_BENCH_BOARDS, 3.0, 2.1 and 2.0) agent x model "
        "accuracies with 95% CIs, from the Harbor Hub leaderboard-read function tbench.ai reads (POST)."
    ),
    optional_env=(BOARDS_ENV,),
    licence="Terminal-Bench leaderboard via Harbor Hub (terms: https://hub.harborframework.com/terms)",
    verified_on=Recording(
        repository="wkin-t/benchmark-viewer (tests/fixtures/leaderboard.json, a saved answer of the function)",
        commit="68901e60c1bea3672096f961d4b3696ff72a8477",
        recorded="2026-09-21",
        licence="Harbor Hub terms of service (the repository's NOTICE: not relicensed by it)",
        files=(_RECORDED,),
        replay=((ENDPOINT, _RECORDED, '{"package":"terminal-bench/terminal-bench","name":"4-0-0"}'),),
    ),
)
BOARD = Board(SOURCE, "community", "terminal-bench-harness")


def request(version: str, page: int | None = None, *, unknown: tuple[str, ...] = ()) -> FetchRequest:
    """The POST that asks for one version's board (and one page of it); ``unknown`` carries board
    names the environment asked for that evalhouse does not know, for the parse to refuse."""
    package, name = BOARDS[version]
    body: dict[str, Any] = {"package": package, "name": name}
    if page is not None:
        body["page"] = page
    label = f"board:{version}" + (f":{page}" if page else "") + (f";unknown={','.join(unknown)}" if unknown else "")
    return FetchRequest.post_json(ENDPOINT, body, label=label)


def boards(env: Mapping[str, str]) -> tuple[str, ...]:
    """The boards to read: ``$EVALHOUSE_TERMINAL_BENCH_BOARDS`` (comma-separated) or the verified default."""
    named = tuple(v.strip() for v in (env.get(BOARDS_ENV) or "").split(",") if v.strip())
    return named or DEFAULT_BOARDS


def plan(state: SourceState) -> list[FetchRequest]:
    wanted = boards(state.env)
    unknown = tuple(v for v in wanted if v not in BOARDS)
    if unknown:  # the current board is asked for and its parse fails naming them: a typo is never silent
        return [request(DEFAULT_BOARDS[0], unknown=unknown)]
    return [request(version) for version in wanted]


def _json(body: bytes) -> Any:
    try:
        return json.loads(common.decode_text(body, "the Terminal-Bench response"))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ParseError(f"the Terminal-Bench response is not JSON: {exc}") from exc


def _board(doc: Any, meta: FetchMeta) -> tuple[str, list[Any]]:
    """The version asked for and the answer's rows, once the answer is checked to be that board."""
    asked, _, unknown = (meta.label or "").partition(";unknown=")
    if unknown:
        raise ParseError(
            f"{BOARDS_ENV} names Terminal-Bench board(s) {unknown.split(',')} evalhouse does not read: {list(BOARDS)}"
        )
    label = asked.split(":")
    version = label[1] if len(label) > 1 and label[0] == "board" else ""
    if version not in BOARDS:
        raise LayoutChanged(
            f"layout changed: {meta.url} was not asked for a known Terminal-Bench board ({meta.label!r})"
        )
    if (
        not isinstance(doc, dict)
        or not isinstance(doc.get("rows"), list)
        or not isinstance(doc.get("leaderboard"), dict)
    ):
        raise LayoutChanged("layout changed: the Terminal-Bench answer has no 'leaderboard' object and 'rows' list")
    described = (doc["leaderboard"].get("package"), doc["leaderboard"].get("name"))
    if described != BOARDS[version]:
        raise LayoutChanged(
            f"layout changed: asked for Terminal-Bench {version} {BOARDS[version]}, the answer describes {described}"
        )
    return version, doc["rows"]


def follow(body: bytes, *, meta: FetchMeta) -> list[FetchRequest]:
    """The next page a paginated answer announces (same body, the next page number)."""
    doc = _json(body)
    version, _ = _board(doc, meta)
    pages = doc.get("pagination") if isinstance(doc.get("pagination"), dict) else {}
    page, total = pages.get("page"), pages.get("total_pages")
    if isinstance(page, int) and isinstance(total, int) and page < total:
        return [request(version, page + 1)]
    return []


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    version, rows = _board(_json(body), meta)
    if not rows:
        raise EmptyPlaceholder(f"empty placeholder: Terminal-Bench {version} lists no rows")
    for i, row in enumerate(rows):
        yield from _row(row, version, f"{version} rows[{i}]", meta)


def _label(value: Any) -> str | None:
    """A display field: ``{"label", "url"}`` or a plain string."""
    if isinstance(value, dict):
        value = value.get("label")
    return value.strip() if isinstance(value, str) and value.strip() else None


def _number(metrics: Mapping[str, Any], key: str) -> float | None:
    value = metrics.get(key)
    return None if value in (None, "", "N/A") else common.parse_number(value, "percent")


def _row(row: Any, version: str, locator: str, meta: FetchMeta) -> Iterator[ParseItem]:
    payload = common.row_payload(row if isinstance(row, dict) else {"value": row})
    if (
        not isinstance(row, dict)
        or not isinstance(row.get("metadata"), dict)
        or not isinstance(row.get("metrics"), dict)
    ):
        yield ParseFailure(locator, "a row needs a 'metadata' and a 'metrics' object", payload)
        return
    if row.get("status") != "display":
        yield ParseFailure(locator, f"hidden by the board (status {row.get('status')!r}): not a shown score", payload)
        return
    info, metrics = row["metadata"], row["metrics"]
    agent, model = _label(info.get("agent_display")), _label(info.get("model_display"))
    if agent is None or model is None:
        yield ParseFailure(locator, "a row needs metadata.agent_display and metadata.model_display", payload)
        return
    try:
        score = common.parse_number(metrics.get("accuracy"), "percent")
        half, stderr = _number(metrics, "accuracy_ci95_half_width"), _number(metrics, "accuracy_stderr")
    except CellError as exc:
        yield ParseFailure(locator, str(exc), payload)
        return
    uncertainty: dict[str, Any] = {}
    if half is not None:
        uncertainty.update(common.confidence_interval(score - half, score + half))
    if stderr is not None:
        uncertainty.update(common.standard_error(stderr))
    trials = row.get("n_trials") or metrics.get("n_trials")
    if isinstance(trials, int) and not isinstance(trials, bool) and trials > 0:
        uncertainty["num_samples"] = trials
    effort = _label(info.get("reasoning_effort"))
    row_id = str(row.get("id") or f"{agent}|{model}|{effort}")
    setup = {"agent": agent, **({"reasoning_effort": effort} if effort else {})}
    details = {SOURCE_RECORD_ID: row_id, "rank": str(row.get("rank", ""))}
    details |= {k: text for k in RUN_FACTS if (text := common.fact_text(metrics.get(k))) is not None}
    cells = [("accuracy", "pass_rate", "percent", (0.0, 100.0), False, score, uncertainty or None, details)]
    for key, (metric, unit, bounds, lower_is_better) in OTHER_CELLS.items():
        if metrics.get(key) is None:
            continue
        try:
            value = common.parse_number(metrics[key], unit)
        except CellError as exc:
            yield ParseFailure(f"{locator}.metrics.{key}", str(exc), payload)
            continue
        cells.append((key, metric, unit, bounds, lower_is_better, value, None, {SOURCE_RECORD_ID: row_id}))
    results = [
        BOARD.result(
            meta.url,
            dataset_name=f"Terminal-Bench {version}",
            result_id=f"{row_id}.{key}",
            metric_id=metric,
            metric_name=key,
            unit=unit,
            bounds=bounds,
            lower_is_better=lower_is_better,
            score=value,
            uncertainty=cell_uncertainty,
            details=cell_details,
            setup=setup,
        )
        for key, metric, unit, bounds, lower_is_better, value, cell_uncertainty, cell_details in cells
    ]
    org, agent_org = _label(info.get("model_org")), _label(info.get("agent_org"))
    own = org is not None and org.casefold() == (agent_org or "").casefold()
    yield BOARD.record(
        meta,
        Model(
            id=model,
            name=model,
            developer=org,
            details={"agent": agent, "agent_org": agent_org, "reasoning_effort": effort},
            deployment_type="externally_managed",
        ),
        results,
        (locator, payload),
        evaluated_by="model_developer" if own else None,
        original_source=agent_org,
        evaluation_timestamp=_label(info.get("date")),
    )
