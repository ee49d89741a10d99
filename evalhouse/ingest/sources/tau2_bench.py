"""τ²-bench leaderboard: the submissions the leaderboard site publishes (sierra-research/tau2-bench).

The site reads ``submissions/manifest.json`` — ``{"submissions": [...], "voice_submissions": [...],
"legacy_submissions": [...]}``, each a list of submission ids — then each
``submissions/<id>/submission.json``: ``model_name``, ``model_organization``,
``submitting_organization``, ``submission_type`` (``standard`` / ``custom``), ``modality``
(``text`` / ``voice``), ``reasoning_effort``, ``results`` ``{domain: {pass_1 … pass_4, cost,
retrieval_config} | null}`` for the domains ``airline``, ``retail``, ``telecom`` and
``banking_knowledge``, and ``methodology`` (``evaluation_date``, ``tau2_bench_version``,
``user_simulator``). ``pass_k`` is pass^k in percent (the task solved in all of k trials);
``cost`` is the mean USD of one trajectory.

The crawl: the manifest (a layout check, no scores) -> every listed submission (:func:`follow`).
A submission is one record; each non-null value one cell. Airline, retail and telecom are subsets
of τ²-Bench; ``banking_knowledge`` is τ³-Banking. The tau2-bench version, user simulator, modality,
submission type, reasoning effort and retrieval setting are the cell's setup (version 1.0.x
re-graded tasks: scores across versions are not comparable, so they never share a cell).
Results measured on the original τ-bench (``tau2_bench_version`` ``original tau-bench``: a model
developer's model-card numbers) are not τ²-bench numbers: they are filed under τ-Bench
(original), never under τ²-Bench.

Who measured: Sierra (the benchmark's authors) for its own runs; the model's developer when it
submitted its own model; otherwise an independent evaluator.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
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

BASE = "https://raw.githubusercontent.com/sierra-research/tau2-bench/main/web/leaderboard/public/submissions/"
MANIFEST = BASE + "manifest.json"
LISTS = ("submissions", "voice_submissions", "legacy_submissions")
#: domain -> (dataset name, subset)
DOMAINS: Mapping[str, tuple[str, str | None]] = {
    "airline": ("τ²-Bench", "airline"),
    "retail": ("τ²-Bench", "retail"),
    "telecom": ("τ²-Bench", "telecom"),
    "banking_knowledge": ("τ³-Banking", None),
}
#: result field -> (metric id, unit, bounds, lower is better)
CELLS: Mapping[str, tuple[str, str, tuple[float | str, float | str], bool]] = {
    "pass_1": ("pass_rate", "percent", (0.0, 100.0), False),
    "pass_2": ("pass_rate.pass_hat_2", "percent", (0.0, 100.0), False),
    "pass_3": ("pass_rate.pass_hat_3", "percent", (0.0, 100.0), False),
    "pass_4": ("pass_rate.pass_hat_4", "percent", (0.0, 100.0), False),
    "cost": ("cost", "usd", (0.0, "Infinity"), True),
}
NOT_TAU2 = "original tau-bench"
#: the original τ-bench (its two domains), where a legacy submission says it was measured
ORIGINAL = "τ-Bench (original)"
ORIGINAL_DOMAINS = ("airline", "retail")
AUTHORS = "Sierra"
#: The submissions recorded for the replay: every id of the manifest at the recorded commit.
RECORDED: Mapping[str, list[str]] = common.load_mapping("tau2_bench.yaml")["recorded"]
_FIXTURES = "fixtures:tau2-bench/submissions/"
_FILES = ("manifest.json", *(f"{sid}/submission.json" for ids in RECORDED.values() for sid in ids))

SOURCE = SourceSpec(
    key="tau2-bench",
    name="τ²-bench leaderboard",
    kind="leaderboard",
    tier=1,
    organisation="Sierra Research",
    homepage="https://taubench.com/",
    default_urls=(MANIFEST,),
    cadence="weekly",
    parser_version="tau2-bench/1",
    collection="tau2-bench",
    description=(
        "τ²-bench submissions (text, voice and legacy): pass^1-pass^4 and cost per domain (airline, "
        "retail, telecom; banking_knowledge as τ³-Banking), with version, user simulator and modality "
        "as setup; crawled from the manifest to each submission file."
    ),
    licence="MIT (sierra-research/tau2-bench)",
    verified_on=Recording(
        repository="sierra-research/tau2-bench (web/leaderboard/public/submissions, what the site publishes)",
        commit="a2c024725189473d2d7cea3a5cfdbcc67478e41f",
        recorded="2026-08-18",
        licence="MIT",
        files=tuple(_FIXTURES + f for f in _FILES),
        replay=tuple((BASE + f, _FIXTURES + f) for f in _FILES),
    ),
)


def plan(state: SourceState) -> list[FetchRequest]:
    return [FetchRequest(url=MANIFEST, label="manifest", **state.conditional(MANIFEST))]


def _manifest(body: bytes) -> dict[str, list[str]]:
    doc = json_document(body, "the τ²-bench manifest")
    if not isinstance(doc, dict) or not any(isinstance(doc.get(k), list) for k in LISTS):
        raise LayoutChanged(f"layout changed: the τ²-bench manifest has none of the lists {LISTS}")
    unknown = sorted(set(doc) - set(LISTS))
    if unknown:
        raise LayoutChanged(f"layout changed: the τ²-bench manifest has list(s) this parser does not know: {unknown}")
    wrong = [k for k in LISTS if not isinstance(doc.get(k, []), list)]
    if wrong:
        raise LayoutChanged(f"layout changed: the τ²-bench manifest's {wrong} are not lists of ids")
    lists = {k: [str(s) for s in doc.get(k) or []] for k in LISTS}
    if not any(lists.values()):
        raise EmptyPlaceholder("empty placeholder: the τ²-bench manifest lists no submission")
    return lists


def follow(body: bytes, *, meta: FetchMeta) -> list[FetchRequest]:
    """From the manifest: every listed submission's file."""
    if meta.label != "manifest":
        return []
    return [
        FetchRequest(url=f"{BASE}{sid}/submission.json", label=f"submission:{kind}")
        for kind, ids in _manifest(body).items()
        for sid in ids
    ]


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    """The manifest is checked for its layout; a submission file gives one record."""
    if meta.label == "manifest" or meta.url.endswith("/manifest.json"):
        _manifest(body)
        return
    doc = json_document(body, f"the τ²-bench submission {meta.url}")
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), dict):
        raise LayoutChanged(f"layout changed: {meta.url} has no 'results' object")
    yield from _submission(doc, meta.url.removeprefix(BASE).removesuffix("/submission.json"), meta)


def _who(doc: Mapping[str, Any]) -> str:
    submitter = str(doc.get("submitting_organization") or "").strip()
    if submitter == AUTHORS:
        return "benchmark_creator"
    if submitter and submitter == str(doc.get("model_organization") or "").strip():
        return "model_developer"
    return "independent_evaluator"


def _submission(doc: Mapping[str, Any], sid: str, meta: FetchMeta) -> Iterator[ParseItem]:
    payload = common.lazy_payload(doc)
    name = str(doc.get("model_name") or "").strip()
    if not name:
        yield ParseFailure(sid, "a submission needs a 'model_name'", payload())
        return
    method = doc.get("methodology") if isinstance(doc.get("methodology"), dict) else {}
    version = str(method.get("tau2_bench_version") or "unknown").strip()
    if version[:1] in "vV" and version[1:2].isdigit():  # "v0.1.3" and "0.1.3" are one version
        version = version[1:]
    setup = {
        "tau2_bench_version": version,
        "user_simulator": common.fact_text(method.get("user_simulator")),
        "modality": common.fact_text(doc.get("modality")) or "text",
        "submission_type": common.fact_text(doc.get("submission_type")),
        "reasoning_effort": common.fact_text(doc.get("reasoning_effort")),
    }
    board = Board(SOURCE, _who(doc), "tau2-bench")
    results: list[dict[str, Any]] = []
    for domain, values in doc["results"].items():
        if values is not None:
            yield from _domain(
                board=board,
                sid=sid,
                domain=domain,
                values=values,
                setup={k: v for k, v in setup.items() if v is not None},
                results=results,
                payload=payload,
                meta=meta,
            )
    release = doc.get("model_release") if isinstance(doc.get("model_release"), dict) else {}
    facts = {"submission": sid, "submitting_organization": common.fact_text(doc.get("submitting_organization"))}
    try:
        facts.update(common.date_details(str(release.get("release_date") or "")))
    except CellError as exc:
        yield ParseFailure(f"{sid}.model_release.release_date", str(exc), payload())
    developer = str(doc.get("model_organization") or "").strip() or None
    yield board.record(
        meta,
        Model(id=name, name=name, developer=developer, details=facts),
        results,
        (sid, payload),
        evaluation_timestamp=common.fact_text(method.get("evaluation_date")),
    )


def _domain(  # noqa: PLR0913 - one domain's values, where they go, and what they came with
    *,
    board: Board,
    sid: str,
    domain: str,
    values: Any,
    setup: dict[str, str],
    results: list[dict[str, Any]],
    payload: Callable[[], str],
    meta: FetchMeta,
) -> Iterator[ParseItem]:
    """The cells of one domain's results, appended to ``results``; failures yielded by name."""
    where = f"{sid}.results.{domain}"
    if domain not in DOMAINS or not isinstance(values, dict):
        yield ParseFailure(where, f"unknown domain {domain!r} (known: {sorted(DOMAINS)}) or not an object", payload())
        return
    present = [f for f in CELLS if values.get(f) is not None]
    dataset, subset = DOMAINS[domain]
    if setup.get("tau2_bench_version", "").casefold() == NOT_TAU2:  # the original τ-bench, never τ²
        if domain not in ORIGINAL_DOMAINS:
            if present:  # an all-null domain holds nothing to file
                yield ParseFailure(where, f"the original τ-bench has no {domain!r} domain", payload())
            return
        dataset = ORIGINAL
    if values.get("retrieval_config"):
        setup = {**setup, "retrieval_config": str(values["retrieval_config"])}
    for field in present:
        metric, unit, bounds, lower = CELLS[field]
        try:
            score = common.parse_number(values[field], unit)
        except CellError as exc:
            yield ParseFailure(f"{where}.{field}", str(exc), payload())
            continue
        results.append(
            board.result(
                meta.url,
                dataset_name=dataset,
                evaluation_name=f"{dataset} - {subset}" if subset else dataset,
                result_id=f"{sid}.{domain}.{field}",
                metric_id=metric,
                metric_name=field,
                unit=unit,
                bounds=bounds,
                lower_is_better=lower,
                score=score,
                details={SOURCE_RECORD_ID: sid},
                setup=setup,
            )
        )
    for field in sorted(set(values) - set(CELLS) - {"retrieval_config"}):
        yield ParseFailure(f"{where}.{field}", f"unknown result field {field!r}", payload())
