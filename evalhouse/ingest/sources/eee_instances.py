"""Every Eval Ever instance files: ``<uuid>_samples.jsonl`` beside the aggregate ``<uuid>.json``.

One instance line (schema 0.3.0 ``instance_level_eval``) becomes one ``item_response`` row:
``sample_id`` and ``sample_hash`` identify the item (the hash is EEE's content hash of input and
reference), ``evaluation.score`` is ``p_correct`` and ``evaluation.is_correct`` is ``acc``, the
first raw output is ``output``; the evaluation block is kept in ``scores`` and everything else
(messages, answer attribution, token usage, performance, metadata, errors) in ``unmapped``. The
aggregate file names the model and the harness and gives the aggregate result the instances
belong to (``eval_run.aggregate``).

The aggregate ``<uuid>.json`` is itself an EEE record: it loads as one, with or without its
samples file (the loader validates it, migrates a legacy one, and quarantines one it refuses).
Its instances name it by ``evaluation_id``, which ``eval_run.details`` keeps.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from typing import Any

from evalhouse.ingest import bundle
from evalhouse.ingest.source import FetchMeta, ParseError, Recording, SourceSpec
from evalhouse.ingest.sources import _items as X
from evalhouse.schema.items import content_sha256, eval_run_id, jtext
from evalhouse.schema.records import ParsedRecord, ParseFailure, ParseItem

SOURCE = SourceSpec(
    key="eee-instances",
    name="Every Eval Ever instance-level sidecars",
    kind="harness_log",
    tier=2,
    organisation="EvalEval",
    homepage="https://github.com/evaleval/every_eval_ever",
    default_urls=(),
    cadence="manual",
    parser_version="eee-instances/1",
    collection="eee-instances",
    description="EEE files: the aggregate <uuid>.json as a record, its <uuid>_samples.jsonl as item rows.",
    licence="MIT (EEE datastore)",
    identity_from="id",
    verified_on=Recording(
        repository="evaleval/every_eval_ever (tests/data/skill_reference_conversion/)",
        commit="9bce4136e789ec006c62582f5f9d107d20f8b398",
        recorded="2026-08-13",
        licence="MIT",
        files=(
            "shared:formats/eee/demo-source/demo-org/demo-model/f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40.json",
            "shared:formats/eee/demo-source/demo-org/demo-model/f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40_samples.jsonl",
        ),
    ),
)

SAMPLES_RE = re.compile(r"^(?P<uuid>.+)_samples\.jsonl$")
MAPPED = {
    "sample_id": "item.source_item_id",
    "sample_hash": "item.content_sha256",
    "input": "item.content / item.choices / item.gold",
    "evaluation_name": "item.benchmark (via the aggregate's dataset_name)",
    "evaluation_result_id": "eval_run (one per aggregate result)",
    "evaluation_id": "eval_run",
    "model_id": "checkpoint.suite / model",
    "output": "item_response.output (output.raw[0]; the rest in unmapped)",
    "evaluation": "item_response.scores; score -> p_correct, is_correct -> acc",
}


#: A harness log is read from files ('evalhouse ingest KEY PATH'): nothing to fetch.
plan = X.files_only


def members(target: str | None, names: list[str]) -> list[str]:
    pairs = sorted(
        {SAMPLES_RE.match(n)["uuid"] for n in names if SAMPLES_RE.match(n)}
        | {n.removesuffix(".json") for n in names if n.endswith(".json")}
    )
    if target is not None:
        m = SAMPLES_RE.match(target)
        uuid = m["uuid"] if m else target.removesuffix(".json")
        pairs = [uuid]
    chosen = []
    for uuid in pairs:
        chosen += [n for n in (f"{uuid}.json", f"{uuid}_samples.jsonl") if n in names]
    return sorted(chosen)


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    files, _ = bundle.members(body)
    if "" in files:
        files = {meta.label or "x_samples.jsonl": files.pop("")}
    sample_files = sorted(n for n in files if SAMPLES_RE.match(n))
    aggregates = sorted(n for n in files if n.endswith(".json"))
    if not sample_files and not aggregates:
        raise ParseError("neither an aggregate <uuid>.json nor a <uuid>_samples.jsonl: nothing to load")
    for name in aggregates:
        record = X.json_doc(files[name], name)
        samples = files.get(f"{name.removesuffix('.json')}_samples.jsonl")
        yield ParsedRecord(
            record=record,
            locator=name,
            samples_sha256=hashlib.sha256(samples).hexdigest() if samples is not None else None,
            json_text=True,
        )
    for name in sample_files:
        aggregate_name = f"{SAMPLES_RE.match(name)['uuid']}.json"
        aggregate = X.json_doc(files[aggregate_name], aggregate_name) if aggregate_name in files else None
        yield from _file(name, files[name], aggregate)


def _file(name: str, body: bytes, aggregate: dict[str, Any] | None) -> Iterator[ParseItem]:
    b = X.BatchBuilder(locator=name)
    b.fields({f"samples.{k}": v for k, v in MAPPED.items()})
    results = {
        r.get("evaluation_result_id") or r.get("evaluation_name"): r
        for r in (aggregate or {}).get("evaluation_results") or []
    }
    library = (aggregate or {}).get("eval_library") or {}
    lines = 0
    for n, obj in X.jsonl(body, name):
        lines += 1
        if isinstance(obj, ParseFailure):
            yield obj
            continue
        try:
            row, item, run = _line(obj, results, library, aggregate, name)
        except (KeyError, TypeError, ValueError) as exc:
            yield ParseFailure(f"{name}:{n}", f"not an EEE instance line: {type(exc).__name__}: {exc}")
            continue
        model = obj["model_id"]
        ckpt = b.checkpoint({"suite": model, "checkpoint": "unknown", "model": model})
        run_id = b.eval_run(
            {
                **run,
                "checkpoint_id": ckpt,
                "eval_run_id": eval_run_id("eee-instances", obj["evaluation_id"], run["task"], ckpt),
            }
        )
        item_id = b.item(item)
        extra = b.unmapped("samples", obj, MAPPED)
        out = obj.get("output") or {}
        if isinstance(out, dict) and set(out) - {"raw"}:
            extra = {**(extra or {}), "output": {k: v for k, v in out.items() if k != "raw"}}
        b.responses.append(
            {
                **row,
                "item_id": item_id,
                "checkpoint_id": ckpt,
                "eval_run_id": run_id,
                "epoch": 1,
                "unmapped": jtext(extra),
                "locator": name,
                "line": n,
            }
        )
    yield b.build(lines_read=lines)


def _line(obj: dict[str, Any], results: dict, library: dict, aggregate: dict | None, name: str):
    key = obj.get("evaluation_result_id") or obj["evaluation_name"]
    result = results.get(key) or {}
    benchmark = (result.get("source_data") or {}).get("dataset_name") or obj["evaluation_name"]
    inp = obj["input"]
    evaluation = obj["evaluation"]
    item = {
        "benchmark": benchmark,
        "source_item_id": str(obj["sample_id"]),
        "content_sha256": obj.get("sample_hash") or content_sha256(inp),
        "content": jtext(inp),
        "choices": inp.get("choices"),
        "gold": jtext(inp.get("reference")),
    }
    raw = (obj.get("output") or {}).get("raw") or []
    correct = evaluation.get("is_correct")
    row = {
        "p_correct": X.as_float(evaluation.get("score")),
        "score_name": "evaluation.score",
        "acc": None if correct is None else float(bool(correct)),
        "output": raw[0] if raw else None,
        "scores": jtext(evaluation),
    }
    run = {
        "harness": f"eee:{library.get('name') or 'unknown'}",
        "harness_version": library.get("version"),
        "task": key,
        "task_config": jtext(result.get("generation_config")),
        "evaluated_at": (aggregate or {}).get("evaluation_timestamp"),
        "aggregate": jtext(result or None),
        "details": jtext({k: v for k, v in (aggregate or {}).items() if k != "evaluation_results"} or None),
        "locator": name,
    }
    return row, item, run
