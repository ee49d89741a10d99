"""EleutherAI lm-evaluation-harness output: ``results_<ts>.json`` plus ``samples_<task>_<ts>.jsonl``.

Each task of the results file becomes one EEE record (:mod:`._harness`): one score per
``"<metric>,<filter>"`` entry of ``results[task]``, with its ``<metric>_stderr,<filter>`` as the
standard error, ``n-samples[task].effective`` as n, the direction from ``higher_is_better`` and
the setup the file states (n-shot, the task version, a chat template or system instruction).
A task's aggregate loads whether or not its samples file is there; a value that is not a number
or a metric ``harness_metrics.yaml`` does not declare is quarantined with its key.

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
from evalhouse.ingest.source import FetchMeta, ParseError, Recording, SourceSpec
from evalhouse.ingest.sources import _harness as H
from evalhouse.ingest.sources import _items as X
from evalhouse.ingest.sources._board import Model, org_of
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
        "Harness output: a results_<ts>.json (every task's aggregate scores) with its "
        "samples_<task>_<ts>.jsonl files when run with --log_samples (item rows). "
        "'evalhouse ingest lm-eval DIR' or a results/samples file."
    ),
    licence="as the log's producer states",
    identity_from="id",
    verified_on=Recording(
        repository="EleutherAI/lm-evaluation-harness (tests/models/results_deleteme/…, tests/testdata/)",
        commit="7be00f3b3bfb51237dcb723f75d28802649f001a",
        recorded="2025-03-05",
        licence="MIT",
        files=(
            "fixtures:lm-eval/results_2025-01-21T00-40-03.356274.json",
            "fixtures:lm-eval/cpu_group_regression_expected.json",
            # and, with ../shared, a results file and its samples from the EEE repository's tests
            "shared:formats/lm_eval/results_2026-01-21T03-44-18.458309.json",
            "shared:formats/lm_eval/samples_math_perturbed_full_2026-01-21T03-44-18.458309.jsonl",
        ),
    ),
)
BOARD = H.board(SOURCE, "lm_eval")

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
#: Keys of ``results[task]`` that describe the task rather than hold a metric value.
NOT_METRICS = frozenset({"alias", "name", "samples", "sample_len", "sample_count"})
#: ``config.model`` values of models lm-eval loads from weights (the others call an API).
LOCAL_MODELS = frozenset({"hf", "hf-auto", "huggingface", "hf-multimodal", "vllm", "vllm-vlm", "sglang", "mamba_ssm"})


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
    if "" in files:  # one file, not a bundle: a samples file by its name, else a results file
        label = meta.label or "results.json"
        lone = files.pop("")
        files = {label if (RESULTS_RE.match(label) or SAMPLES_RE.match(label)) else f"results_{label}.json": lone}
    results = {RESULTS_RE.match(n)["ts"]: n for n in files if RESULTS_RE.match(n)}
    samples = [(n, SAMPLES_RE.match(n)) for n in files if SAMPLES_RE.match(n)]
    if not results:
        raise ParseError("no results_<timestamp>.json: ingest the run directory or its results file")
    headers = {ts: X.json_doc(files[name], name) for ts, name in results.items()}
    for ts, name in sorted(results.items()):
        shas = {m["task"]: hashlib.sha256(files[n]).hexdigest() for n, m in samples if m["ts"] == ts}
        yield from _aggregates(headers[ts], name, shas, meta)
    for name, m in sorted(samples, key=lambda s: s[0]):
        if m["ts"] not in results:
            yield ParseFailure(name, f"samples file without its results_{m['ts']}.json")
            continue
        yield from _task(headers[m["ts"]], m["task"], name, files[name])


def metric_keys(cells: dict[str, Any]) -> list[str]:
    """The keys of ``results[task]`` that hold a metric value (``"acc,none"``; not its stderr)."""
    return [k for k in cells if k.strip() and k not in NOT_METRICS and not k.split(",", 1)[0].endswith("_stderr")]


def _aggregates(header: Any, name: str, samples: dict[str, str], meta: FetchMeta) -> Iterator[ParseItem]:
    """One record per task of ``results``, or a quarantined cell per value that cannot load."""
    if not isinstance(header, dict) or not isinstance(header.get("results"), dict):
        yield ParseFailure(name, "not an lm-eval results file: no 'results' object", None)
        return
    model = _model(header)
    ckpt = X.checkpoint_key(_checkpoint(header))
    for task, cells in header["results"].items():
        where = f"{name}#results.{task}"
        if not isinstance(cells, dict):
            yield ParseFailure(where, f"results entry is {type(cells).__name__}, not an object", _dump(cells))
            continue
        keys = metric_keys(cells)
        if not keys:
            continue  # a group's placeholder row: no value to load
        if model is None:
            for key in keys:
                yield ParseFailure(
                    f"{where}.{key}", "the results file names no model (model_name, model_args pretrained=/model=)"
                )
            continue
        results: list[dict[str, Any]] = []
        for key in keys:
            cell = _cell(header, task, key, cells)
            if isinstance(cell, str):
                yield ParseFailure(f"{where}.{key}", cell, _dump({key: cells[key]}))
            else:
                results.append(cell)
        if not results:
            continue
        date = header.get("date")
        task_row = H.Task(
            eval_run_id=_run_id(header, task, ckpt),
            model=model,
            locator=where,
            results=results,
            evaluation_timestamp=_iso(date),
            library_version=header.get("lm_eval_version"),
            samples_sha256=samples.get(task),
        )
        yield H.record(BOARD, meta, task_row, _dump({task: cells}))


def _cell(header: dict[str, Any], task: str, key: str, cells: dict[str, Any]) -> dict[str, Any] | str:
    """One metric entry of ``results[task]`` as an EEE result, or why it cannot be one."""
    metric, _, filt = key.partition(",")
    value = H.number(cells[key])
    if value is None:
        return f"value {cells[key]!r} of {key!r} is not a number"
    spec = H.metric_spec(SOURCE.key, metric)
    if spec is None:
        return H.undeclared(SOURCE.key, metric)
    stated = _obj(_per_task(header, "higher_is_better", task)).get(metric)
    lower = (not stated) if isinstance(stated, bool) else spec.lower_is_better
    n = _obj(_per_task(header, "n-samples", task)).get("effective")
    stderr_key = f"{metric}_stderr,{filt}" if filt else f"{metric}_stderr"
    benchmark, subset = _item_names(header, task)
    config = _obj(_per_task(header, "configs", task))
    return BOARD.result(
        H.dataset_url(config.get("dataset_path"), SOURCE.homepage),
        dataset_name=benchmark,
        evaluation_name=f"{benchmark} - {subset}" if subset else None,
        result_id=f"{task}/{key}",
        metric_id=spec.metric_id,
        metric_name=metric,
        unit=spec.unit,
        bounds=spec.bounds,
        lower_is_better=lower,
        score=value,
        uncertainty=H.uncertainty(stderr=cells.get(stderr_key), n=n if n is not None else _count(cells)),
        details={"lm_eval_key": key, "task": task},
        setup=_setup(header, task),
        metric_parameters={"filter": filt} if filt and filt != "none" else None,
    )


def _count(cells: dict[str, Any]) -> Any:
    """A group's sample count, which ``n-samples`` does not list: ``samples`` or ``sample_len``."""
    return cells.get("samples") if cells.get("samples") is not None else cells.get("sample_len")


def _setup(header: dict[str, Any], task: str) -> dict[str, str]:
    """What the file states about how the task was run (the cell's setup)."""
    stated = {
        "shots": _per_task(header, "n-shot", task),
        "task_version": _per_task(header, "versions", task),
        "chat_template_sha": header.get("chat_template_sha"),
        "system_instruction_sha": header.get("system_instruction_sha"),
        "fewshot_as_multiturn": header.get("fewshot_as_multiturn") or None,
    }
    return {k: text for k, v in stated.items() if (text := H.setup_text(v)) is not None}


def _model(header: dict[str, Any]) -> Model | None:
    """The model the file names (the Hub repository for a local model), else None."""
    config = _obj(header.get("config"))
    model_id = header.get("model_name") or _pretrained(config.get("model_args"))
    if not model_id:
        return None
    local = config.get("model") in LOCAL_MODELS
    facts = {
        "hf_repo_id": model_id if local else None,
        "revision": config.get("model_sha") or config.get("model_revision"),
        "num_parameters": H.setup_text(config.get("model_num_parameters")),
        "model_dtype": H.setup_text(config.get("model_dtype")),
        "lm_eval_model_type": H.setup_text(config.get("model")),
    }
    return Model(
        id=str(model_id),
        name=str(model_id),
        developer=org_of(str(model_id)) if local else None,
        details={k: str(v) for k, v in facts.items() if v},
        deployment_type="self_deployed" if local else "unknown",
        availability="open_weights" if local else "unknown",
    )


def _run_id(header: dict[str, Any], task: str, checkpoint_id: str) -> str:
    """The harness run of ``task``: the same id for its record and its item rows."""
    config = _obj(_per_task(header, "configs", task))
    prompt_sha = hashlib.sha256(json.dumps(_template(config), sort_keys=True).encode()).hexdigest()
    task_hash = _per_task(header, "task_hashes", task)
    return eval_run_id(
        "lm-eval", header.get("lm_eval_version"), task, task_hash, prompt_sha, checkpoint_id, header.get("date")
    )


def _template(config: dict[str, Any]) -> dict[str, Any]:
    return {
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


def _per_task(header: dict[str, Any], key: str, task: str) -> Any:
    """``header[key][task]``, or None where the file has no such table."""
    return _obj(header.get(key)).get(task)


def _obj(value: Any) -> dict[str, Any]:
    """A JSON object of the file, or an empty one where the file has something else."""
    return value if isinstance(value, dict) else {}


def _iso(date: Any) -> str | None:
    if isinstance(date, int | float) and not isinstance(date, bool):
        return datetime.fromtimestamp(float(date), UTC).isoformat()
    return str(date) if date else None


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)[:2000]


def _checkpoint(header: dict[str, Any]) -> dict[str, Any]:
    config = _obj(header.get("config"))
    # never the model type ("hf"): a file that names no model is an unknown checkpoint
    model = header.get("model_name") or _pretrained(config.get("model_args")) or "unknown"
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
    """The model ``model_args`` names: ``pretrained=`` (weights), else ``model=`` (an API model)."""
    if isinstance(args, str):
        parts = dict(p.split("=", 1) for p in args.split(",") if "=" in p)
        return parts.get("pretrained") or parts.get("model") or None
    if isinstance(args, dict):
        return args.get("pretrained") or args.get("model")
    return None


def _run_row(header: dict[str, Any], task: str, checkpoint_id: str, samples_name: str) -> dict[str, Any]:
    config = _obj(_per_task(header, "configs", task))
    prompt_sha = hashlib.sha256(json.dumps(_template(config), sort_keys=True).encode()).hexdigest()
    date = header.get("date")
    evaluated = datetime.fromtimestamp(float(date), UTC).isoformat() if isinstance(date, int | float) else date
    aggregate = {
        "results": _per_task(header, "results", task),
        "n-samples": _per_task(header, "n-samples", task),
        "higher_is_better": _per_task(header, "higher_is_better", task),
        "versions": _per_task(header, "versions", task),
    }
    details = {k: v for k, v in header.items() if k not in RUN_KEYS}
    version = header.get("lm_eval_version")
    return {
        "eval_run_id": _run_id(header, task, checkpoint_id),
        "harness": "lm-evaluation-harness",
        "harness_version": version,
        "task": task,
        "checkpoint_id": checkpoint_id,
        "task_config": jtext(config),
        "prompt_template_sha256": prompt_sha,
        "n_shot": _per_task(header, "n-shot", task),
        "evaluated_at": evaluated,
        "aggregate": jtext(aggregate),
        "details": jtext(details),
        "locator": samples_name,
    }


def _item_names(header: dict[str, Any], task: str) -> tuple[str, str]:
    """(benchmark, subtask): a task is a subtask of the group above it that scores it, up to the
    highest such group (``mmlu_abstract_algebra`` under ``mmlu_stem`` under ``mmlu``: MMLU). A
    group with no score of its own only bundles its tasks (``leaderboard`` over
    ``leaderboard_bbh``, which is the benchmark of its subtasks); a task under none is its own."""
    parents = {
        sub: group
        for group, subtasks in _obj(header.get("group_subtasks")).items()
        for sub in (subtasks if isinstance(subtasks, list) else [])
        if sub != group
    }
    results = _obj(header.get("results"))
    root, seen = task, {task}
    while (parent := parents.get(root)) is not None and parent not in seen and metric_keys(_obj(results.get(parent))):
        root = parent
        seen.add(root)
    return (root, task) if root != task else (task, "")


def _task(header: dict[str, Any], task: str, name: str, body: bytes) -> Iterator[ParseItem]:
    b = X.BatchBuilder(locator=name)
    b.fields({f"samples.{k}": v for k, v in MAPPED_LINE.items()})
    ckpt = b.checkpoint(_checkpoint(header))
    run = b.eval_run(_run_row(header, task, ckpt, name))
    config = _obj(_per_task(header, "configs", task))
    benchmark, subtask = _item_names(header, task)
    split = config.get("test_split") or config.get("validation_split") or ""
    revision = _obj(config.get("dataset_kwargs")).get("revision")
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
