"""SWE-bench leaderboards: ``data/leaderboards.json`` of the swebench.com site repository.

The site (SWE-bench/swe-bench.github.io, built into www.swebench.com) renders every leaderboard
from one file, ``{"leaderboards": [{"name", "results": [...]}, ...]}``. The boards are ``Verified``,
``Lite``, ``Test`` (the full 2,294-task set) and ``Multimodal``, plus ``bash-only``: the SWE-bench
team's own runs of every model in one minimal agent (mini-SWE-agent) on SWE-bench Verified —
the same runs its ``Verified`` board lists again under an agent-prefixed name (same ``folder``).

Each result is one submission (a folder of the swe-bench/experiments repository): ``name``,
``folder``, ``resolved`` (percent of the split's tasks resolved), ``date``, ``cost`` (USD for the
whole split), ``instance_cost`` (USD per task) and ``instance_calls`` (model calls per task) where
known, ``checked`` (the maintainers verified the submission), ``os_model`` / ``os_system``, and
``tags`` (``Model: <id>``, ``Org: <name>``, ``System: Attempts - 1`` / ``2+``).

A submission names its model only through ``Model:`` tags: with exactly one, that is the
record's model; with none or several (a system built on many models) the submission itself is.
The agent is the cell's setup: ``mini-SWE-agent <version>`` for the team's runs (a result with
``mini-swe-agent_version``; a run's two listings then make one record, loaded once), else the
submission's name. Who measured: the SWE-bench team for its mini-SWE-agent runs (benchmark
creator); a submitter for the others (community), whether or not the maintainers ``checked`` it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from evalhouse.ingest.fetch import FetchRequest
from evalhouse.ingest.source import (
    EmptyPlaceholder,
    FetchMeta,
    LayoutChanged,
    Recording,
    SourceSpec,
    SourceState,
)
from evalhouse.ingest.sources import _common as common
from evalhouse.ingest.sources._board import Board, Model
from evalhouse.ingest.sources._common import CellError
from evalhouse.ingest.sources._payloads import json_document
from evalhouse.schema.records import SOURCE_RECORD_ID, ParseFailure, ParseItem

URL = "https://raw.githubusercontent.com/SWE-bench/swe-bench.github.io/master/data/leaderboards.json"
#: leaderboard name -> dataset name
BOARDS: Mapping[str, str] = {
    "bash-only": "SWE-bench Verified",
    "Verified": "SWE-bench Verified",
    "Lite": "SWE-bench Lite",
    "Test": "SWE-bench Full",
    "Multimodal": "SWE-bench Multimodal",
}
#: field -> (metric id, unit, bounds, lower is better)
CELLS: Mapping[str, tuple[str, str, tuple[float | str, float | str], bool]] = {
    "resolved": ("pass_rate", "percent", (0.0, 100.0), False),
    "cost": ("cost.total", "usd", (0.0, "Infinity"), True),
    "instance_cost": ("cost", "usd", (0.0, "Infinity"), True),
    "instance_calls": ("steps", "count", (0.0, "Infinity"), True),
}
MINI = "mini-swe-agent_version"

SOURCE = SourceSpec(
    key="swe-bench",
    name="SWE-bench leaderboards",
    kind="leaderboard",
    tier=1,
    organisation="SWE-bench team (Princeton / Stanford)",
    homepage="https://www.swebench.com/",
    default_urls=(URL,),
    cadence="weekly",
    parser_version="swe-bench/1",
    collection="swe-bench",
    description=(
        "swebench.com's leaderboards (Verified, Lite, full Test, Multimodal and the team's own "
        "bash-only mini-SWE-agent runs): percent resolved per submission, with cost and model calls "
        "where given."
    ),
    licence="MIT (SWE-bench/swe-bench.github.io)",
    verified_on=Recording(
        repository="SWE-bench/swe-bench.github.io (data/leaderboards.json, the site's data)",
        commit="f702a7f5b1274494f6fb84d3a96fd8be9828c1e7",
        recorded="2025-10-06",
        licence="MIT",
        files=("fixtures:swe-bench/leaderboards.json",),
        replay=((URL, "fixtures:swe-bench/leaderboards.json"),),
    ),
)


def plan(state: SourceState) -> list[FetchRequest]:
    return [FetchRequest(url=URL, label="leaderboards", **state.conditional(URL))]


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    doc = json_document(body, "the SWE-bench leaderboards JSON")
    boards = doc.get("leaderboards") if isinstance(doc, dict) else None
    if not isinstance(boards, list):
        raise LayoutChanged("layout changed: no 'leaderboards' list in the SWE-bench leaderboards file")
    if not boards:
        raise EmptyPlaceholder("empty placeholder: the SWE-bench leaderboards file lists no leaderboard")
    for board in boards:
        name = board.get("name") if isinstance(board, dict) else None
        results = board.get("results") if isinstance(board, dict) else None
        if name not in BOARDS or not isinstance(results, list):
            yield ParseFailure(
                f"leaderboards[{name!r}]",
                f"unknown leaderboard {name!r} (known: {sorted(BOARDS)}) or no 'results' list",
                common.row_payload({"name": name}),
            )
            continue
        for i, entry in enumerate(results):
            yield from _entry(name, entry, f"{name}[{i}]", meta)


def _entry(board: str, entry: Any, locator: str, meta: FetchMeta) -> Iterator[ParseItem]:
    payload = common.row_payload(entry if isinstance(entry, dict) else {"value": entry})
    if not isinstance(entry, dict) or not entry.get("name") or not entry.get("folder"):
        yield ParseFailure(locator, "a submission needs 'name' and 'folder'", payload)
        return
    dataset = BOARDS[board]
    mini = entry.get(MINI)  # the SWE-bench team's own mini-SWE-agent run
    folder = str(entry["folder"])
    tags = [str(t) for t in entry["tags"]] if isinstance(entry.get("tags"), list) else []
    models = [t.split(":", 1)[1].strip() for t in tags if t.startswith("Model:")]
    agent = f"mini-SWE-agent {mini}" if mini else str(entry["name"])
    setup = {"agent": agent}
    attempts = [t.split("-", 1)[1].strip() for t in tags if t.startswith("System: Attempts")]
    if attempts:
        setup["attempts"] = attempts[0]
    results = []
    for field, (metric, unit, bounds, lower) in CELLS.items():
        if entry.get(field) is None:
            continue
        try:
            score = common.parse_number(entry[field], unit)
        except CellError as exc:
            yield ParseFailure(f"{locator}.{field}", str(exc), payload)
            continue
        results.append(
            common.score_result(
                source_key=SOURCE.key,
                dataset_name=dataset,
                evaluation_name=dataset,
                url=meta.url,
                result_id=f"{folder}.{field}",
                metric_id=metric,
                metric_name=field,
                metric_kind=metric.split(".")[0],
                unit=unit,
                lower_is_better=lower,
                bounds=bounds,
                score=score,
                details={SOURCE_RECORD_ID: folder},
                setup=setup,
            )
        )
    model_name = models[0] if len(models) == 1 else str(entry["name"])
    details = {
        "submission": folder,
        "checked": common.fact_text(entry.get("checked")),
        "open_source_model": common.fact_text(entry.get("os_model")),
        "open_source_system": common.fact_text(entry.get("os_system")),
    }
    if not mini:  # a team run's two listings tag different organisations; the model names its own
        orgs = [t.split(":", 1)[1].strip() for t in tags if t.startswith("Org:")]
        details["organisations"] = ", ".join(orgs) or None
    if len(models) > 1:
        details["models"] = ", ".join(models)
    board_spec = Board(SOURCE, "benchmark_creator" if mini else "community", "swe-bench")
    yield board_spec.record(
        meta,
        Model(id=model_name, name=model_name, details=details, deployment_type="unknown"),
        results,
        (locator, payload),
        evaluation_timestamp=str(entry["date"]) if entry.get("date") else None,
    )
