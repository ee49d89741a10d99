"""Inspect AI eval logs: the ``.eval`` zip (``header.json`` + ``samples/*.json``) and the ``.json`` form.

The log's results become one EEE record (:mod:`._harness`): one score per metric of each scorer
in ``results.scores`` (``accuracy``, ``mean``), with the scorer's ``stderr`` as the standard
error and its ``std`` as the standard deviation, ``scored_samples`` (else
``completed_samples``) as n, the scorer and its epoch reducer as metric parameters, an LLM
grader as ``llm_scoring``, and the setup the log states (epochs, task arguments, generate
config, the grader model). A log with scores but no samples loads its scores; a log with neither
is one quarantined row; the scores of a run that did not end in ``success`` are quarantined
with its status.

One sample of one epoch becomes one ``item_response`` row: epochs are kept (``epoch``), every
scorer's value, answer and explanation are kept in ``scores``, ``p_correct`` is the first
scorer's value as Inspect's ``value_to_float`` reads it (C = 1, I = 0, P = 0.5, N = 0, numbers as
they are). The item is the sample (input, choices, target; a letter target indexes the choices).
Messages, events, token usage, timings, metadata and errors are kept in ``unmapped``; the log
header (eval spec, plan, results, stats) goes to ``eval_run``. Both forms are read directly from
the bytes with the standard library, so no Inspect installation is needed to ingest a log.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from evalhouse.ingest import bundle
from evalhouse.ingest.source import FetchMeta, ParseError, Recording, SourceSpec
from evalhouse.ingest.sources import _harness as H
from evalhouse.ingest.sources import _items as X
from evalhouse.ingest.sources._board import Model, org_of
from evalhouse.ingest.sources._common import load_mapping
from evalhouse.schema.items import content_sha256, eval_run_id, jtext
from evalhouse.schema.records import ParseFailure, ParseItem

SOURCE = SourceSpec(
    key="inspect-log",
    name="Inspect AI eval logs",
    kind="harness_log",
    tier=1,
    organisation="UK AI Security Institute",
    homepage="https://inspect.aisi.org.uk/",
    default_urls=(),
    cadence="manual",
    parser_version="inspect-log/1",
    collection="inspect-log",
    description=(
        "Inspect AI logs (.eval zip or .json): every scorer's metrics as scores, and the samples "
        "(epochs kept) as item rows when the log has them."
    ),
    licence="as the log's producer states",
    identity_from="id",
    verified_on=Recording(
        repository="evaleval/every_eval_ever (tests/data/inspect/)",
        commit="9bce4136e789ec006c62582f5f9d107d20f8b398",
        recorded="2026-08-13",
        licence="MIT",
        files=(
            "shared:formats/inspect/data_arc_qwen.json",
            "shared:formats/inspect/data_arc_sonnet.json",
            "shared:formats/inspect/data_cvebench_empty_choices.json",
            "shared:formats/inspect/data_cyse2_vuln_exploit_challenges.json",
            "shared:formats/inspect/data_intercode_ctf_local_path.json",
            "shared:formats/inspect/data_pubmedqa_gpt4o_mini.json",
            "shared:formats/inspect/data_with_llm_scoring.json",
        ),
    ),
)
BOARD = H.board(SOURCE, "inspect_ai")
_MAPPING = load_mapping("inspect_log.yaml")
#: Metrics that are the uncertainty of a scorer's other metrics, not scores of their own.
STDERR_METRICS = ("stderr", "bootstrap_stderr")
STD_METRICS = ("std", "stddev")
UNCERTAINTY_METRICS = frozenset({*STDERR_METRICS, *STD_METRICS, "var"})

VALUE_TO_FLOAT = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
MAPPED = {
    "id": "item.source_item_id",
    "epoch": "item_response.epoch",
    "input": "item.content",
    "choices": "item.choices",
    "target": "item.gold / item.gold_index",
    "output": "item_response.output (output.completion; the rest in unmapped.output)",
    "scores": "item_response.scores; first scorer -> p_correct, answer -> chosen_index",
}
SAMPLE_FILE = re.compile(r"^samples/.+\.json$")


#: A harness log is read from files ('evalhouse ingest KEY PATH'): nothing to fetch.
plan = X.files_only


def _log(body: bytes) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    """The header and ``(locator, sample)`` pairs of either log form."""
    if bundle.is_zip(body):
        files = bundle.unpack(body)
        if "header.json" not in files:
            raise ParseError("a zip without header.json is not an Inspect .eval log")
        header = X.json_doc(files["header.json"], "header.json")
        if not isinstance(header, dict):
            raise ParseError("header.json is not a JSON object: not an Inspect .eval log")
        names = sorted(n for n in files if SAMPLE_FILE.match(n))
        return header, [(n, X.json_doc(files[n], n)) for n in names]
    doc = X.json_doc(body, "the Inspect log")
    if not isinstance(doc, dict) or "eval" not in doc:
        raise ParseError("not an Inspect log: no 'eval' header")
    samples = doc.get("samples") or []
    if not isinstance(samples, list):
        raise ParseError(f"not an Inspect log: 'samples' is {type(samples).__name__}, not a list")
    return {k: v for k, v in doc.items() if k != "samples"}, [(f"samples[{i}]", s) for i, s in enumerate(samples)]


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    header, samples = _log(body)
    ev = header.get("eval")
    if not isinstance(ev, dict):
        raise ParseError("not an Inspect log: no 'eval' header object")
    label = meta.label or "log"
    checkpoint, task = _run_of(ev)
    run_id = eval_run_id("inspect-log", ev.get("eval_id"), ev.get("run_id"), task, X.checkpoint_key(checkpoint))
    cells = list(metric_cells(header))
    if not cells and not samples:
        status = header.get("status")
        yield ParseFailure(
            label,
            f"the log holds neither scores nor samples (status {status!r}, results.scores empty, no samples)",
            json.dumps({k: header.get(k) for k in ("status", "results", "error")}, default=str)[:2000],
        )
        return
    if cells:
        output = samples[0][1].get("output") if samples and isinstance(samples[0][1], dict) else None
        served = output.get("model") if isinstance(output, dict) else None  # what the API answered as
        served = served if isinstance(served, str) else None
        yield from _aggregate(header, cells, label=label, run_id=run_id, meta=meta, served=served)
    if samples:
        yield from _samples(header, samples, label, run_id)


def _run_of(ev: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The checkpoint row and the task of the log's eval header."""
    model = str(ev.get("model") or "unknown")
    task = str(ev.get("task_registry_name") or ev.get("task") or "unknown")
    return {"suite": model, "checkpoint": "unknown", "model": model}, task


def metric_cells(header: dict[str, Any]) -> Iterator[tuple[int, dict[str, Any], str, Any]]:
    """``(scorer index, scorer, metric name, metric)`` of every metric that is a score (not an
    uncertainty of the scorer's other metrics)."""
    results = header.get("results")
    scores = results.get("scores") if isinstance(results, dict) else None
    for i, scorer in enumerate(scores if isinstance(scores, list) else []):
        metrics = scorer.get("metrics") if isinstance(scorer, dict) else None
        for key, metric in (metrics if isinstance(metrics, dict) else {}).items():
            name = metric.get("name", key) if isinstance(metric, dict) else key
            if name not in UNCERTAINTY_METRICS:
                yield i, scorer, str(name), metric


def _aggregate(  # noqa: PLR0913 - the log's header, its cells, and where they came from
    header: dict[str, Any],
    cells: list[tuple[int, dict[str, Any], str, Any]],
    *,
    label: str,
    run_id: str,
    meta: FetchMeta,
    served: str | None,
) -> Iterator[ParseItem]:
    ev = header["eval"]
    results = _object(header.get("results"))
    status = header.get("status")
    out: list[dict[str, Any]] = []
    for i, scorer, name, metric in cells:
        where = f"{label}#results.scores[{i}].metrics.{name}"
        if status not in (None, "success"):
            done, total = results.get("completed_samples"), results.get("total_samples")
            reason = f"the run ended with status {status!r} ({done} of {total} samples): not the task's result"
            yield ParseFailure(where, reason, json.dumps(metric, default=str)[:2000])
            continue
        cell = _cell(ev, results, scorer, name, metric)
        if isinstance(cell, str):
            yield ParseFailure(where, cell, json.dumps(metric, default=str)[:2000])
        else:
            out.append(cell)
    if out:
        model = _model(str(ev.get("model") or ""))
        if served:
            model = replace(model, details={**model.details, "served_model": served})
        task = H.Task(
            eval_run_id=run_id,
            model=model,
            locator=label,
            results=out,
            evaluation_timestamp=ev.get("created"),
            library_version=_object(ev.get("packages")).get("inspect_ai"),
        )
        yield H.record(BOARD, meta, task, json.dumps(results, default=str)[:2000])


def _cell(ev: dict[str, Any], results: dict[str, Any], scorer: dict[str, Any], name: str, metric: Any):
    """One scorer metric as an EEE result, or why it cannot be one."""
    value = H.number(metric.get("value") if isinstance(metric, dict) else metric)
    if value is None:
        return f"value of metric {name!r} is not a number: {metric!r}"
    spec = H.metric_spec(SOURCE.key, name)
    if spec is None:
        return H.undeclared(SOURCE.key, name)
    siblings = {
        (m.get("name", k) if isinstance(m, dict) else k): (m.get("value") if isinstance(m, dict) else m)
        for k, m in (scorer.get("metrics") or {}).items()
    }
    stderr = next((siblings[k] for k in STDERR_METRICS if k in siblings), None)
    std = next((siblings[k] for k in STD_METRICS if k in siblings), None)
    n = scorer.get("scored_samples")
    n = n if isinstance(n, int) else results.get("completed_samples")
    scorer_name = str(scorer.get("name") or scorer.get("scorer") or "scorer")
    params = {"scorer": scorer_name, **({"reducer": str(scorer["reducer"])} if scorer.get("reducer") else {})}
    task = str(ev.get("task_registry_name") or ev.get("task") or "unknown")
    dataset = _object(ev.get("dataset"))
    judge, setup = _grader(_object(scorer.get("params"))), _setup(ev)
    if judge is not None:
        setup["grader_model"] = judge["judges"][0]["model_info"]["id"]
    return BOARD.result(
        H.dataset_url(dataset.get("location") or dataset.get("name"), SOURCE.homepage),
        dataset_name=task.rsplit("/", 1)[-1],
        result_id=f"{scorer_name}/{name}",
        metric_id=spec.metric_id,
        metric_name=name,
        unit=spec.unit,
        bounds=spec.bounds,
        lower_is_better=spec.lower_is_better,
        score=value,
        uncertainty=H.uncertainty(stderr=stderr, n=n, std=std),
        details={"task": task, "scorer": scorer_name},
        setup=setup,
        metric_parameters=params,
        llm_scoring=judge,
    )


def _setup(ev: dict[str, Any]) -> dict[str, str]:
    """What the log states about how the task was run: epochs, task version and arguments, and the
    generate config (each a setup key; unset arguments are left out)."""
    config = _object(ev.get("config"))
    epochs = config.get("epochs")
    stated: dict[str, Any] = {"epochs": epochs, "task_version": ev.get("task_version") or None}
    if isinstance(epochs, int) and epochs > 1:
        stated["epochs_reducer"] = config.get("epochs_reducer")
    stated |= {f"task_args.{k}": v for k, v in _object(ev.get("task_args")).items()}
    stated |= {f"generate.{k}": v for k, v in _object(ev.get("model_generate_config")).items()}
    return {k: text for k, v in stated.items() if (text := H.setup_text(v)) is not None}


def _object(value: Any) -> dict[str, Any]:
    """A JSON object of the log, or an empty one where the log has something else."""
    return value if isinstance(value, dict) else {}


def _grader(params: dict[str, Any]) -> dict[str, Any] | None:
    """EEE ``llm_scoring`` for a scorer graded by a model (its ``grader_model`` and template)."""
    grader = params.get("grader_model")
    model = grader.get("model") if isinstance(grader, dict) else grader
    template = params.get("grader_template")
    if not isinstance(model, str) or not model or not isinstance(template, str):
        return None
    judge = _model(model)
    info = {
        "name": judge.name,
        "id": judge.id,
        **({"developer": judge.developer} if judge.developer else {}),
        "additional_details": {"deployment_type": "unknown", "model_availability": "unknown", **judge.details},
    }
    return {"judges": [{"model_info": info}], "input_prompt": template}


def _model(path: str) -> Model:
    """An Inspect model name (``<api>/<model>``, ``<api>/<platform>/<model>``) as the model it names:
    a developer's own API names the developer (``openai/azure/gpt-4o-mini`` is ``openai/gpt-4o-mini``
    on Azure); a host serves another developer's model (``ollama/qwen2.5:0.5b`` is ``qwen2.5:0.5b``)."""
    api, _, rest = path.partition("/")
    facts = {"inspect_model": path, "inference_platform": api}
    developer = (_MAPPING["developer_apis"] or {}).get(api)
    if developer and rest:
        *platform, name = rest.split("/")
        if platform:
            facts["inference_platform"] = "/".join(platform)
        return Model(id=f"{developer}/{name}", name=f"{developer}/{name}", developer=developer, details=facts)
    model_id = rest if api in (_MAPPING["hosts"] or []) and rest else path
    return Model(id=model_id, name=model_id, developer=org_of(model_id), details=facts)


def _samples(
    header: dict[str, Any], samples: list[tuple[str, dict[str, Any]]], label: str, run_id: str
) -> Iterator[ParseItem]:
    """The item rows of the log's samples (one per sample and epoch), or a refused sample each."""
    ev = header["eval"]
    checkpoint, task = _run_of(ev)
    b = X.BatchBuilder(locator=label)
    b.fields({f"samples[].{k}": v for k, v in MAPPED.items()})
    ckpt = b.checkpoint(checkpoint)
    plan_ = header.get("plan")
    prompt_sha = hashlib.sha256(json.dumps(plan_, sort_keys=True, default=str).encode()).hexdigest()
    version = _object(ev.get("packages")).get("inspect_ai")
    run = b.eval_run(
        {
            "eval_run_id": run_id,
            "harness": "inspect_ai",
            "harness_version": version,
            "task": task,
            "checkpoint_id": ckpt,
            "task_config": jtext({k: ev.get(k) for k in ("task_args", "config", "dataset", "scorers", "solver")}),
            "prompt_template_sha256": prompt_sha,
            "n_shot": None,
            "evaluated_at": ev.get("created"),
            "aggregate": jtext(header.get("results")),
            "details": jtext({k: v for k, v in header.items() if k != "results"}),
            "locator": label,
        }
    )
    benchmark = task
    for n, (where, sample) in enumerate(samples, start=1):
        if not isinstance(sample, dict):
            yield ParseFailure(f"{label}#{where}", f"unreadable sample: a {type(sample).__name__}, not an object")
            continue
        try:
            row, item = _sample(sample)
        except (KeyError, TypeError, ValueError) as exc:
            yield ParseFailure(f"{label}#{where}", f"unreadable sample: {type(exc).__name__}: {exc}")
            continue
        item_id = b.item({**item, "benchmark": benchmark})
        extra = b.unmapped("samples[]", sample, MAPPED)
        output = sample.get("output")
        if isinstance(output, dict) and set(output) - {"completion"}:
            extra = {**(extra or {}), "output": {k: v for k, v in output.items() if k != "completion"}}
        b.responses.append(
            {
                **row,
                "item_id": item_id,
                "checkpoint_id": ckpt,
                "eval_run_id": run,
                "unmapped": jtext(extra),
                "locator": f"{label}#{where.split('[')[0]}",
                "line": n,
            }
        )
    yield b.build(lines_read=len(samples))


def _sample(s: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    choices = s.get("choices") or None
    target = s.get("target")
    gold_index = None
    if choices and isinstance(target, str) and len(target) == 1 and target.isalpha():
        gold_index = ord(target.upper()) - ord("A")
    item = {
        "source_item_id": str(s["id"]),
        "content": jtext(s.get("input")),
        "choices": choices,
        "gold": target if isinstance(target, str) else jtext(target),
        "gold_index": gold_index,
        "content_sha256": content_sha256({"input": s.get("input"), "choices": choices, "target": target}),
    }
    scores = s.get("scores") or {}
    first = next(iter(scores.values()), None) if isinstance(scores, dict) else None
    value = first.get("value") if isinstance(first, dict) else None
    p = VALUE_TO_FLOAT.get(value) if isinstance(value, str) else X.as_float(value)
    answer = first.get("answer") if isinstance(first, dict) else None
    chosen = None
    if choices and isinstance(answer, str) and len(answer) == 1 and answer.isalpha():
        chosen = ord(answer.upper()) - ord("A")
    output = s.get("output")
    text = output.get("completion") if isinstance(output, dict) else None
    row = {
        "epoch": int(s.get("epoch") or 1),
        "p_correct": p,
        "acc": p if choices else None,
        "score_name": next(iter(scores), None) if scores else None,
        "chosen_index": chosen,
        "output": text,
        "scores": jtext(scores),
    }
    return row, item
