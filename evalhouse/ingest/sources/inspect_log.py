"""Inspect AI eval logs: the ``.eval`` zip (``header.json`` + ``samples/*.json``) and the ``.json`` form.

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
from typing import Any

from evalhouse.ingest import bundle
from evalhouse.ingest.source import FetchMeta, ParseError, SourceSpec
from evalhouse.ingest.sources import _items as X
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
    description="Item-level Inspect AI logs (.eval zip or .json), samples and epochs kept.",
    licence="as the log's producer states",
)

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
        names = sorted(n for n in files if SAMPLE_FILE.match(n))
        return header, [(n, X.json_doc(files[n], n)) for n in names]
    doc = X.json_doc(body, "the Inspect log")
    if not isinstance(doc, dict) or "eval" not in doc:
        raise ParseError("not an Inspect log: no 'eval' header")
    samples = doc.get("samples") or []
    return {k: v for k, v in doc.items() if k != "samples"}, [(f"samples[{i}]", s) for i, s in enumerate(samples)]


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    header, samples = _log(body)
    if not samples:
        raise ParseError("the log holds no samples (logged with log_samples off?): nothing item-level to load")
    ev = header["eval"]
    label = meta.label or "log"
    b = X.BatchBuilder(locator=label)
    b.fields({f"samples[].{k}": v for k, v in MAPPED.items()})
    model = ev.get("model") or "unknown"
    ckpt = b.checkpoint({"suite": model, "checkpoint": "unknown", "model": model})
    task = ev.get("task_registry_name") or ev.get("task") or "unknown"
    plan_ = header.get("plan")
    prompt_sha = hashlib.sha256(json.dumps(plan_, sort_keys=True, default=str).encode()).hexdigest()
    version = (ev.get("packages") or {}).get("inspect_ai")
    run = b.eval_run(
        {
            "eval_run_id": eval_run_id("inspect-log", ev.get("eval_id"), ev.get("run_id"), task, ckpt),
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
