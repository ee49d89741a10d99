"""Stanford HELM run directories: ``run_spec``, ``stats``, ``scenario_state``, ``per_instance_stats``.

``stats.json`` (the run's aggregate) becomes one EEE record (:mod:`._harness`): one score per
stat that scores the model (``exact_match``, ``f1_score``, ``rouge_l``, … with their ``@k``
forms), for every split, sub-split and perturbation HELM computed it on; n is the run's
``num_instances`` of that split, the setup is the split, the perturbation, the shots
(``max_train_instances``) and the adaptation method, and the HELM stat name is the metric's
parameter (``quasi_exact_match`` is not ``exact_match``). Stats that describe the run (token
counts, runtimes) stay in the run's aggregate; a stat in neither list of ``harness_metrics.yaml``
is quarantined. A directory with stats but no ``scenario_state.json`` loads its scores.

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
from dataclasses import dataclass
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
    description=(
        "HELM run directories (run_spec, stats, scenario_state, per_instance_stats): the run's "
        "aggregate stats as scores, its request states as item rows."
    ),
    licence="as the run's producer states",
    identity_from="id",
    verified_on=Recording(
        repository="evaleval/every_eval_ever (tests/data/helm/)",
        commit="9bce4136e789ec006c62582f5f9d107d20f8b398",
        recorded="2026-08-13",
        licence="MIT",
        files=(
            "shared:formats/helm/mmlu-philosophy-gpt2",
            "shared:formats/helm/hellaswag-pythia-1b",
            "shared:formats/helm/narrative-qa-gpt2",
        ),
    ),
)
BOARD = H.board(SOURCE, "helm")

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
    if "run_spec.json" not in files:
        raise ParseError("not a HELM run directory: run_spec.json missing (ingest the run directory)")
    run = _Run.read(files)
    cells = metric_stats(run.stats)
    if not cells and run.state is None:
        yield ParseFailure(
            "run_spec.json",
            "the run directory holds neither scores (no stats.json, or no stat in it scores the model)"
            " nor samples (no scenario_state.json)",
        )
        return
    yield from _aggregate(run, meta)
    if run.state is not None:
        yield from _items(run)


@dataclass(frozen=True)
class _Run:
    """What the run directory's files say, read once."""

    spec: dict[str, Any]
    scenario: dict[str, Any]
    state: dict[str, Any] | None
    per_instance: list[dict[str, Any]]
    stats: list[Any] | None
    adapter: dict[str, Any]
    checkpoint: dict[str, Any]
    run_id: str
    prompt_sha: str
    benchmark: str
    subtask: str

    @classmethod
    def read(cls, files: dict[str, bytes]) -> _Run:
        def doc(name: str) -> Any:
            return X.json_doc(files[name], name) if name in files else None

        spec = doc("run_spec.json")
        if not isinstance(spec, dict):
            raise ParseError("run_spec.json is not a JSON object")
        adapter = spec.get("adapter_spec")
        adapter = adapter if isinstance(adapter, dict) else {}
        model = adapter.get("model") or "unknown"
        checkpoint = {"suite": model, "checkpoint": adapter.get("model_deployment") or "unknown", "model": model}
        template = {k: adapter.get(k) for k in adapter if k.endswith(("prefix", "suffix")) or k == "instructions"}
        prompt_sha = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).hexdigest()
        scenario = doc("scenario.json")
        scenario = scenario if isinstance(scenario, dict) else {}
        args = (spec.get("scenario_spec") or {}).get("args") or {}
        stats = doc("stats.json")
        # the item files are checked whole before anything is read from them
        state = doc("scenario_state.json")
        if state is not None and not (isinstance(state, dict) and isinstance(state.get("request_states") or [], list)):
            raise ParseError("scenario_state.json is not an object with a list of request_states")
        per_instance = doc("per_instance_stats.json") or []
        if not isinstance(per_instance, list) or not all(isinstance(e, dict) for e in per_instance):
            raise ParseError("per_instance_stats.json is not a list of objects {instance_id, train_trial_index, stats}")
        return cls(
            spec=spec,
            scenario=scenario,
            state=state,
            per_instance=per_instance,
            stats=stats if isinstance(stats, list) else None,
            adapter=adapter,
            checkpoint=checkpoint,
            run_id=eval_run_id("helm-run", spec.get("name"), prompt_sha, X.checkpoint_key(checkpoint)),
            prompt_sha=prompt_sha,
            benchmark=scenario.get("name") or (spec.get("groups") or [str(spec.get("name")).split(":")[0]])[0],
            subtask=",".join(f"{v}" for _k, v in sorted(args.items())),
        )


def metric_stats(stats: list[Any] | None) -> list[tuple[int, dict[str, Any]]]:
    """``(index, stat)`` of every stat of ``stats.json`` that is not a fact of the run: a score,
    or a quarantined undeclared stat."""
    facts = H.run_facts(SOURCE.key)
    out = []
    for i, stat in enumerate(stats or []):
        label = stat.get("name") if isinstance(stat, dict) else None
        name = label.get("name") if isinstance(label, dict) else None
        if not isinstance(name, str) or name.split("@", 1)[0] not in facts:
            out.append((i, stat))
    return out


def _aggregate(run: _Run, meta: FetchMeta) -> Iterator[ParseItem]:
    results: list[dict[str, Any]] = []
    seen: set[str] = set()
    n_of = _instances(run.stats or [])
    for i, stat in metric_stats(run.stats):
        where = f"stats.json#[{i}]"
        cell = _cell(run, stat, n_of)
        if not isinstance(cell, str) and cell["evaluation_result_id"] in seen:
            cell = f"stat {cell['evaluation_result_id']!r} repeated in stats.json: the first is kept"
        if isinstance(cell, str):
            yield ParseFailure(where, cell, json.dumps(stat, default=str)[:2000])
            continue
        seen.add(cell["evaluation_result_id"])
        results.append(cell)
    if not results:
        return
    model = str(run.adapter.get("model") or "")
    deployment = run.adapter.get("model_deployment")
    task = H.Task(
        eval_run_id=run.run_id,
        model=Model(
            id=model,
            name=model,
            developer=org_of(model),
            details={"helm_model_deployment": str(deployment)} if deployment else {},
        ),
        locator="stats.json",
        results=results,
        evaluation_timestamp=_started(run.state),
    )
    yield H.record(BOARD, meta, task, json.dumps({"run_spec": run.spec.get("name")}))


def _cell(run: _Run, stat: Any, n_of: dict[tuple[Any, ...], int]) -> dict[str, Any] | str:
    """One stat as an EEE result, or why it cannot be one."""
    if not isinstance(stat, dict) or not isinstance(stat.get("name"), dict) or "name" not in stat["name"]:
        return "not a HELM stat: expected {name: {name, split, ...}, count, mean, ...}"
    if not run.adapter.get("model"):
        return "run_spec.json names no model (adapter_spec.model)"
    label = stat["name"]
    name = str(label["name"])
    spec = H.metric_spec(SOURCE.key, name.split("@", 1)[0])
    if spec is None:
        return H.undeclared(SOURCE.key, name)
    value = H.number(stat.get("mean"))
    if value is None:
        return f"stat {name!r} has no mean (count {stat.get('count')!r}): no value was computed"
    split, sub_split = label.get("split"), label.get("sub_split")
    perturbation = label.get("perturbation") if isinstance(label.get("perturbation"), dict) else {}
    setup = {
        "shots": H.setup_text(run.adapter.get("max_train_instances")),
        "method": H.setup_text(run.adapter.get("method")),
        "split": H.setup_text(split),
        "sub_split": H.setup_text(sub_split),
        "perturbation": H.setup_text(perturbation.get("name")),
        **{
            f"perturbation.{k}": H.setup_text(v)
            for k, v in sorted(perturbation.items())
            if k not in ("name", "robustness", "fairness")
        },
    }
    setup = {k: v for k, v in setup.items() if v is not None}
    key_parts = [name, split, sub_split, perturbation.get("name"), *(setup[k] for k in setup if "." in k)]
    return BOARD.result(
        SOURCE.homepage,
        dataset_name=run.benchmark,
        evaluation_name=f"{run.benchmark} - {run.subtask}" if run.subtask else None,
        result_id=":".join(str(p) for p in key_parts if p),
        metric_id=spec.metric_id,
        metric_name=name,
        unit=spec.unit,
        bounds=spec.bounds,
        lower_is_better=spec.lower_is_better,
        score=value,
        # a perturbed stat is computed on each instance of its split (HELM counts them once)
        uncertainty=H.uncertainty(
            n=n_of.get((split, sub_split, _pert_key(perturbation)), n_of.get((split, sub_split, "")))
        ),
        details={"run_spec": str(run.spec.get("name")), "helm_stat": name},
        setup=setup,
        metric_parameters={"helm_stat": name},
    )


def _instances(stats: list[Any]) -> dict[tuple[Any, ...], int]:
    """The run's ``num_instances`` per split, sub-split and perturbation: the n of its scores."""
    out: dict[tuple[Any, ...], int] = {}
    for stat in stats:
        label = stat.get("name") if isinstance(stat, dict) else None
        value = H.number(stat.get("mean")) if isinstance(label, dict) else None
        if value is not None and label.get("name") == "num_instances" and value.is_integer():
            pert = label.get("perturbation") if isinstance(label.get("perturbation"), dict) else {}
            out[(label.get("split"), label.get("sub_split"), _pert_key(pert))] = int(value)
    return out


def _pert_key(perturbation: dict[str, Any]) -> str:
    return str(perturbation.get("name") or "")


def _started(state: dict[str, Any] | None) -> str | None:
    """When the run's first request was made (HELM writes unix seconds per request), if known."""
    states = (state or {}).get("request_states")
    results = [rs.get("result") for rs in states if isinstance(rs, dict)] if isinstance(states, list) else []
    stamps = [r.get("request_datetime") for r in results if isinstance(r, dict)]
    numbers = [s for s in stamps if isinstance(s, int | float) and not isinstance(s, bool)]
    return datetime.fromtimestamp(min(numbers), UTC).isoformat() if numbers else None


def _items(run: _Run) -> Iterator[ParseItem]:
    """The item rows of the run's request states."""
    state, spec, adapter, scenario = run.state or {}, run.spec, run.adapter, run.scenario
    per_instance = run.per_instance
    stats = run.stats
    b = X.BatchBuilder(locator="scenario_state.json")
    b.fields({f"scenario_state.request_states[].{k}": v for k, v in MAPPED.items()})
    ckpt = b.checkpoint(run.checkpoint)
    benchmark, subtask, prompt_sha = run.benchmark, run.subtask, run.prompt_sha
    eval_run = b.eval_run(
        {
            "eval_run_id": run.run_id,
            "harness": "helm",
            "harness_version": None,
            "task": spec.get("name") or benchmark,
            "checkpoint_id": ckpt,
            "task_config": jtext(spec),
            "prompt_template_sha256": prompt_sha,
            "n_shot": adapter.get("max_train_instances"),
            "evaluated_at": _started(run.state),
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
                "eval_run_id": eval_run,
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
