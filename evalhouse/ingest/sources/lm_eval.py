"""EleutherAI lm-evaluation-harness output: ``results_<ts>.json`` plus ``samples_<task>_<ts>.jsonl``.

One samples line becomes one ``item_response`` row, keeping what EEE's own converter drops: every
choice's log-likelihood and greedy flag (``resps``), the choice texts and their lengths, the
filtered answer for generation tasks, and every per-sample metric the harness wrote. ``acc`` and
``acc_norm`` are recomputed from the log-likelihoods with the harness's definitions
(:mod:`evalhouse.ingest.sources._items`), the harness's own values stay in ``scores``.

The results file gives the checkpoint (model, revision, size), the run (harness version, task
config, n-shot, prompt template) and the harness's aggregate per task (``eval_run.aggregate``).
Every other top-level key of the results file is kept in ``eval_run.details``; every samples
field without a column is kept in ``item_response.unmapped``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from evalhouse.ingest import bundle
from evalhouse.ingest.source import FetchMeta, ParseError, SourceSpec
from evalhouse.ingest.sources import _items as X
from evalhouse.schema.items import content_sha256, eval_run_id, jtext
from evalhouse.schema.records import ParseFailure, ParseItem

SOURCE = SourceSpec(
    key="lm-eval",
    name="EleutherAI lm-evaluation-harness logs",
    kind="harness_log",
    tier=1,
    organisation="EleutherAI",
    homepage="https://github.com/EleutherAI/lm-evaluation-harness",
    default_urls=(),
    cadence="manual",
    parser_version="lm-eval/1",
    collection="lm-eval",
    description=(
        "Item-level harness output: a results_<ts>.json with its samples_<task>_<ts>.jsonl files "
        "(run with --log_samples). 'evalhouse ingest lm-eval DIR' or a results/samples file."
    ),
    licence="as the log's producer states",
)

RESULTS_RE = re.compile(r"^results_(?P<ts>.+)\.json$")
SAMPLES_RE = re.compile(r"^samples_(?P<task>.+)_(?P<ts>\d{4}-\d{2}-\d{2}T[\d.:-]+)\.jsonl$")
MAPPED_LINE = {
    "doc_id": "item.source_item_id",
    "doc": "item.content",
    "target": "item.gold / item.gold_index",
    "arguments": "item.choices (arg_1 of each request; the prompt stays in unmapped.arguments)",
    "resps": "item_response.choice_logprob / choice_is_greedy (loglikelihood) or output (generation)",
    "filtered_resps": "item_response.choice_logprob (loglikelihood) or output (generation)",
    "filter": "item_response.score_name suffix",
    "metrics": "item_response.scores keys",
}
RUN_KEYS = ("results", "configs", "versions", "n-shot", "higher_is_better", "n-samples", "lm_eval_version", "date")


#: A harness log is read from files ('evalhouse ingest KEY PATH'): nothing to fetch.
plan = X.files_only


def members(target: str | None, names: list[str]) -> list[str]:
    """The results file(s) and the samples files of the same timestamp."""
    stamps = {RESULTS_RE.match(n)["ts"] for n in names if RESULTS_RE.match(n)}
    if target is not None:
        m = RESULTS_RE.match(target) or SAMPLES_RE.match(target)
        if m is None:
            return [target]
        stamps = {m["ts"]}
    return sorted(
        n
        for n in names
        if (RESULTS_RE.match(n) and RESULTS_RE.match(n)["ts"] in stamps)
        or (SAMPLES_RE.match(n) and SAMPLES_RE.match(n)["ts"] in stamps)
    )


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    files, _target = bundle.members(body)
    if "" in files:  # one file, not a bundle
        files = {meta.label or "results.json": files.pop("")}
    results = {RESULTS_RE.match(n)["ts"]: n for n in files if RESULTS_RE.match(n)}
    samples = [(n, SAMPLES_RE.match(n)) for n in files if SAMPLES_RE.match(n)]
    if not results:
        raise ParseError("no results_<timestamp>.json: ingest the run directory or its results file")
    if not samples:
        raise ParseError("no samples_<task>_<timestamp>.jsonl: the run was made without --log_samples")
    for name, m in sorted(samples, key=lambda s: s[0]):
        if m["ts"] not in results:
            yield ParseFailure(name, f"samples file without its results_{m['ts']}.json")
            continue
        header = X.json_doc(files[results[m["ts"]]], results[m["ts"]])
        yield from _task(header, m["task"], name, files[name])


def _checkpoint(header: dict[str, Any]) -> dict[str, Any]:
    config = header.get("config") or {}
    model = header.get("model_name") or _pretrained(config.get("model_args")) or config.get("model") or "unknown"
    sha = config.get("model_sha")
    revision = config.get("model_revision")
    return {
        "suite": model,
        "checkpoint": f"{revision or 'unknown'}@{sha[:12]}" if sha else (revision or "unknown"),
        "model": model,
        "size_params": config.get("model_num_parameters"),
        "seed": None,  # the harness's random_seed is an evaluation seed, not the training seed
        "revision": sha or revision,
    }


def _pretrained(args: Any) -> str | None:
    if isinstance(args, str):
        for part in args.split(","):
            if part.startswith("pretrained="):
                return part.removeprefix("pretrained=")
    if isinstance(args, dict):
        return args.get("pretrained")
    return None


def _run_row(header: dict[str, Any], task: str, checkpoint_id: str, samples_name: str) -> dict[str, Any]:
    config = (header.get("configs") or {}).get(task) or {}
    template = {
        k: config.get(k)
        for k in (
            "description",
            "doc_to_text",
            "doc_to_choice",
            "doc_to_target",
            "target_delimiter",
            "fewshot_delimiter",
        )
    }
    prompt_sha = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).hexdigest()
    date = header.get("date")
    evaluated = datetime.fromtimestamp(float(date), UTC).isoformat() if isinstance(date, int | float) else date
    aggregate = {
        "results": (header.get("results") or {}).get(task),
        "n-samples": (header.get("n-samples") or {}).get(task),
        "higher_is_better": (header.get("higher_is_better") or {}).get(task),
        "versions": (header.get("versions") or {}).get(task),
    }
    details = {k: v for k, v in header.items() if k not in RUN_KEYS}
    version = header.get("lm_eval_version")
    task_hash = (header.get("task_hashes") or {}).get(task)
    return {
        "eval_run_id": eval_run_id("lm-eval", version, task, task_hash, prompt_sha, checkpoint_id, date),
        "harness": "lm-evaluation-harness",
        "harness_version": version,
        "task": task,
        "checkpoint_id": checkpoint_id,
        "task_config": jtext(config),
        "prompt_template_sha256": prompt_sha,
        "n_shot": (header.get("n-shot") or {}).get(task),
        "evaluated_at": evaluated,
        "aggregate": jtext(aggregate),
        "details": jtext(details),
        "locator": samples_name,
    }


def _item_names(header: dict[str, Any], task: str) -> tuple[str, str]:
    """(benchmark, subtask): a task listed under a group is that group's subtask."""
    for group, subtasks in (header.get("group_subtasks") or {}).items():
        if task in (subtasks or []) and group != task:
            return group, task
    return task, ""


def _task(header: dict[str, Any], task: str, name: str, body: bytes) -> Iterator[ParseItem]:
    b = X.BatchBuilder(locator=name)
    b.fields({f"samples.{k}": v for k, v in MAPPED_LINE.items()})
    ckpt = b.checkpoint(_checkpoint(header))
    run = b.eval_run(_run_row(header, task, ckpt, name))
    config = (header.get("configs") or {}).get(task) or {}
    benchmark, subtask = _item_names(header, task)
    split = config.get("test_split") or config.get("validation_split") or ""
    revision = (config.get("dataset_kwargs") or {}).get("revision")
    delimiter = config.get("target_delimiter", " ")
    lines = 0
    for n, obj in X.jsonl(body, name):
        lines += 1
        if isinstance(obj, ParseFailure):
            yield obj
            continue
        try:
            row, item = _line(obj, delimiter, config.get("output_type"))
        except (KeyError, TypeError, ValueError) as exc:
            yield ParseFailure(
                f"{name}:{n}", f"unreadable samples line: {type(exc).__name__}: {exc}", json.dumps(obj)[:2000]
            )
            continue
        item_id = b.item(
            {**item, "benchmark": benchmark, "subtask": subtask, "split": split, "dataset_revision": revision}
        )
        metric_keys = [k for k in obj.get("metrics") or [] if k in obj]
        extra = b.unmapped("samples", obj, [*MAPPED_LINE, *metric_keys])
        b.responses.append(
            {
                **row,
                "item_id": item_id,
                "checkpoint_id": ckpt,
                "eval_run_id": run,
                "epoch": 1,
                "unmapped": jtext(extra),
                "locator": name,
                "line": n,
            }
        )
    yield b.build(lines_read=lines)


def _line(obj: dict[str, Any], delimiter: str, output_type: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    metrics = {k: obj[k] for k in obj.get("metrics") or [] if k in obj}
    target = obj.get("target")
    args = obj.get("arguments") or {}
    arg_list = [args[k] for k in sorted(args, key=_arg_order)] if isinstance(args, dict) else list(args)
    doc = obj.get("doc")
    item = {
        "source_item_id": str(obj["doc_id"]),
        "content": jtext(doc),
        "content_sha256": None if doc is None else content_sha256(doc),
        "gold": target if isinstance(target, str) else jtext(target),
    }
    resps = obj.get("resps") or []
    loglik = output_type in ("multiple_choice", "loglikelihood") or _looks_loglik(resps)
    row: dict[str, Any] = {"scores": jtext(metrics), "score_name": None}
    if loglik and resps:
        pairs = [r[0] if isinstance(r, list) and r and isinstance(r[0], list) else r for r in resps]
        lls = [X.as_float(p[0]) for p in pairs]
        if any(v is None for v in lls):
            raise ValueError(f"a log-likelihood in resps is not a number: {pairs}")
        choices = [_choice_text(a, delimiter) for a in arg_list]
        gold = _gold_index(target)
        chars = [len(c) for c in choices] if len(choices) == len(lls) else None
        st = X.choice_stats(lls, chars, gold)
        item.update(choices=choices or None, gold_index=gold if isinstance(gold, int) else None)
        row.update(
            choice_logprob=lls,
            choice_is_greedy=[X.as_bool(p[1]) if len(p) > 1 else None for p in pairs],
            choice_chars=chars,
            p_correct=st.p_correct,
            acc=st.acc,
            acc_norm=st.acc_norm,
            margin=st.margin,
            chosen_index=st.chosen_index,
        )
    else:
        filtered = obj.get("filtered_resps")
        out = filtered[0] if isinstance(filtered, list) and filtered else filtered
        first = next(iter(metrics), None)
        row.update(
            output=out if isinstance(out, str) else jtext(out),
            p_correct=X.as_float(metrics.get(first)) if first else None,
            score_name=f"{first},{obj.get('filter', 'none')}" if first else None,
        )
    return row, item


def _arg_order(key: str) -> int:
    digits = re.sub(r"\D", "", key)
    return int(digits) if digits else 0


def _looks_loglik(resps: list[Any]) -> bool:
    first = resps[0] if resps else None
    pair = first[0] if isinstance(first, list) and first and isinstance(first[0], list) else first
    return (
        isinstance(pair, list) and len(pair) == 2 and X.as_float(pair[0]) is not None and X.as_bool(pair[1]) is not None
    )


def _choice_text(arg: Any, delimiter: str) -> str:
    text = arg.get("arg_1") if isinstance(arg, dict) else (arg[1] if isinstance(arg, list) and len(arg) > 1 else "")
    text = str(text or "")
    return text[len(delimiter) :] if delimiter and text.startswith(delimiter) else text


def _gold_index(target: Any) -> int | list[int] | None:
    if isinstance(target, bool):
        return None
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.strip().isdigit():
        return int(target)
    if isinstance(target, list) and all(isinstance(t, int) for t in target):
        return list(target)
    return None
