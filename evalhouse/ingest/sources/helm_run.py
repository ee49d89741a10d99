"""Stanford HELM run directories: ``run_spec.json``, ``scenario_state.json``, ``per_instance_stats.json``.

One request state (an instance of one train trial) becomes one ``item_response`` row. The item is
the scenario instance (input, references, the gold references tagged ``correct``); the answer is
the completion, mapped back through ``output_mapping`` to a choice index for multiple-choice
runs; every per-instance stat HELM computed is kept in ``scores`` (by name, split and
perturbation) and ``p_correct`` is its ``exact_match``. HELM's train trial index (a different
few-shot draw) is the response's ``epoch`` (index + 1). ``stats.json`` (the aggregate) becomes
``eval_run.aggregate``; ``run_spec.json`` the task config; the rest of each request state
(the prompt, request parameters, token log-probabilities) is kept in ``unmapped``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

from evalhouse.ingest import bundle
from evalhouse.ingest.source import FetchMeta, ParseError, SourceSpec
from evalhouse.ingest.sources import _items as X
from evalhouse.schema.items import content_sha256, eval_run_id, jtext
from evalhouse.schema.records import ParseFailure, ParseItem

SOURCE = SourceSpec(
    key="helm-run",
    name="Stanford HELM run directories",
    kind="harness_log",
    tier=1,
    organisation="Stanford CRFM",
    homepage="https://github.com/stanford-crfm/helm",
    default_urls=(),
    cadence="manual",
    parser_version="helm-run/1",
    collection="helm-run",
    description="Item-level HELM output: one run directory (run_spec, scenario_state, per_instance_stats, stats).",
    licence="as the run's producer states",
)

RUN_FILES = ("run_spec.json", "scenario.json", "scenario_state.json", "per_instance_stats.json", "stats.json")
MAPPED = {
    "instance.id": "item.source_item_id",
    "instance.input": "item.content",
    "instance.references": "item.choices / item.gold / item.gold_index",
    "instance.split": "item.split",
    "train_trial_index": "item_response.epoch (index + 1)",
    "output_mapping": "item_response.chosen_index (letter -> choice)",
    "result.completions[0].text": "item_response.output",
    "per_instance_stats[].stats": "item_response.scores; exact_match -> p_correct",
}


#: A harness log is read from files ('evalhouse ingest KEY PATH'): nothing to fetch.
plan = X.files_only


def members(target: str | None, names: list[str]) -> list[str]:
    return [n for n in RUN_FILES if n in names]


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    files, _ = bundle.members(body)
    missing = [n for n in ("run_spec.json", "scenario_state.json") if n not in files]
    if missing:
        raise ParseError(f"not a HELM run directory: {', '.join(missing)} missing (ingest the run directory)")
    spec = X.json_doc(files["run_spec.json"], "run_spec.json")
    state = X.json_doc(files["scenario_state.json"], "scenario_state.json")
    scenario = X.json_doc(files["scenario.json"], "scenario.json") if "scenario.json" in files else {}
    per_instance = (
        X.json_doc(files["per_instance_stats.json"], "per_instance_stats.json")
        if ("per_instance_stats.json" in files)
        else []
    )
    stats = X.json_doc(files["stats.json"], "stats.json") if "stats.json" in files else None
    adapter = spec.get("adapter_spec") or {}
    b = X.BatchBuilder(locator="scenario_state.json")
    b.fields({f"scenario_state.request_states[].{k}": v for k, v in MAPPED.items()})
    model = adapter.get("model") or "unknown"
    ckpt = b.checkpoint({"suite": model, "checkpoint": adapter.get("model_deployment") or "unknown", "model": model})
    benchmark = scenario.get("name") or (spec.get("groups") or [spec.get("name")])[0]
    args = (spec.get("scenario_spec") or {}).get("args") or {}
    subtask = ",".join(f"{v}" for _k, v in sorted(args.items()))
    template = {k: adapter.get(k) for k in adapter if k.endswith(("prefix", "suffix")) or k == "instructions"}
    prompt_sha = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).hexdigest()
    run = b.eval_run(
        {
            "eval_run_id": eval_run_id("helm-run", spec.get("name"), prompt_sha, ckpt),
            "harness": "helm",
            "harness_version": None,
            "task": spec.get("name") or benchmark,
            "checkpoint_id": ckpt,
            "task_config": jtext(spec),
            "prompt_template_sha256": prompt_sha,
            "n_shot": adapter.get("max_train_instances"),
            "evaluated_at": None,
            "aggregate": jtext(stats),
            "details": jtext({"scenario": scenario, "state_adapter_spec": state.get("adapter_spec")}),
            "locator": "run_spec.json",
        }
    )
    by_instance = {(e.get("instance_id"), e.get("train_trial_index", 0)): e for e in per_instance}
    states = state.get("request_states") or []
    for n, rs in enumerate(states, start=1):
        try:
            row, item = _state(rs, by_instance, adapter)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            yield ParseFailure(f"scenario_state.json#request_states[{n - 1}]", f"unreadable request state: {exc}")
            continue
        item_id = b.item({**item, "benchmark": benchmark, "subtask": subtask})
        extra = b.unmapped("scenario_state.request_states[]", rs, ["instance", "train_trial_index", "output_mapping"])
        b.responses.append(
            {
                **row,
                "item_id": item_id,
                "checkpoint_id": ckpt,
                "eval_run_id": run,
                "unmapped": jtext(extra),
                "locator": "scenario_state.json#request_states",
                "line": n,
            }
        )
    yield b.build(lines_read=len(states))


def _state(rs: dict[str, Any], by_instance: dict, adapter: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    inst = rs["instance"]
    refs = inst.get("references") or []
    choices = [r["output"]["text"] for r in refs]
    golds = [j for j, r in enumerate(refs) if "correct" in (r.get("tags") or [])]
    trial = int(rs.get("train_trial_index", 0))
    item = {
        "source_item_id": inst["id"],
        "split": inst.get("split") or "",
        "content": jtext(inst.get("input")),
        "choices": choices,
        "gold": jtext([choices[g] for g in golds]),
        "gold_index": golds[0] if len(golds) == 1 else None,
        "content_sha256": content_sha256({"input": inst.get("input"), "references": refs}),
    }
    completions = (rs.get("result") or {}).get("completions") or []
    text = completions[0]["text"] if completions else None
    chosen = None
    mapping = rs.get("output_mapping")
    if mapping and text is not None:
        picked = mapping.get(text.strip())
        chosen = choices.index(picked) if picked in choices else None
    stats = (by_instance.get((inst["id"], trial)) or {}).get("stats") or []
    scores = {_stat_name(s["name"]): s.get("mean") for s in stats if s.get("count")}
    p = scores.get("exact_match")
    acc = None if chosen is None or not golds else (1.0 if chosen in golds else 0.0)
    row = {
        "epoch": trial + 1,
        "p_correct": p,
        "score_name": "exact_match" if p is not None else None,
        "acc": acc if adapter.get("method", "").startswith("multiple_choice") else None,
        "chosen_index": chosen,
        "output": text,
        "scores": jtext(scores),
    }
    return row, item


def _stat_name(name: dict[str, Any]) -> str:
    key = name["name"]
    if name.get("perturbation"):
        key += f"[{name['perturbation'].get('name')}]"
    return key
