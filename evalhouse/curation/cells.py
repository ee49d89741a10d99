"""Cell identity: what makes two results the same measurement, beyond model and benchmark.

A cell is model configuration × benchmark × **subset** (an MMLU subject, a Global-MMLU language, a
GAIA level — taken from the record's ``evaluation_name``) × metric × **metric parameters** (pass@1
vs pass@8) × **setup** (shots, chain of thought, agent scaffold, tools, prompt template,
generation arguments, the harness where the record names a real one). Two results that differ in
any of these are different cells: they are never superseded by, averaged with or compared against
each other by default.

The setup is everything the record's ``generation_config`` states, except a short list of keys
that describe the run rather than define the measurement (costs, ranks, run counts, notes); a
value too long to read in a key (a prompt template, a tool list) is kept as a short hash.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from evalhouse.curation.registry import normalise_alias

#: ``generation_config.additional_details`` keys that describe a run, not what it measured.
NOT_SETUP = frozenset(
    {
        "hal_rank",
        "runs",
        "verified",
        "is_pareto",
        "total_cost_usd",
        "cost_confidence_interval",
        "accuracy_confidence_interval",
        "notes",
        "note",
        "groups",
        "evalhouse.source_row",
    }
)
#: Evaluation libraries that are harnesses (their name is part of the setup); aggregators and
#: "unknown" are not, so two sources quoting one run share a cell and can be compared.
HARNESSES = frozenset(
    {
        "lm_eval",
        "lm-eval",
        "lm-evaluation-harness",
        "helm",
        "crfm-helm",
        "inspect_ai",
        "inspect",
        "lighteval",
        "openai-evals",
        "simple-evals",
        "opencompass",
        "evalscope",
        "hal",
    }
)
_LONG = 48


@dataclass(frozen=True)
class Cell:
    """A result's cell beyond model, benchmark and metric."""

    subset: str | None
    metric_params: dict[str, Any]
    metric_params_key: str
    setup: dict[str, str]
    setup_key: str


def _short(value: str) -> str:
    return value if len(value) <= _LONG else "#" + hashlib.sha256(value.encode()).hexdigest()[:10]


def _flat(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, separators=(",", ":"))


def setup_of(result: dict[str, Any], harness: str | None = None) -> dict[str, str]:
    """Everything the result's generation config says (minus run facts), plus a real harness."""
    gen = result.get("generation_config") or {}
    setup: dict[str, str] = {}
    for key, value in (gen.get("additional_details") or {}).items():
        if key not in NOT_SETUP and value not in (None, ""):
            setup[key] = _flat(value)
    for key, value in (gen.get("generation_args") or {}).items():
        if value not in (None, "", {}, []):
            setup[f"args.{key}"] = _flat(value)
    if harness and normalise_alias(harness) in HARNESSES:
        setup["harness"] = normalise_alias(harness)
    return setup


def setup_key(setup: dict[str, str]) -> str:
    """``"cot=true;shots=5"``: sorted, readable, long values as short hashes."""
    return ";".join(f"{k}={_short(setup[k])}" for k in sorted(setup))


def metric_params_of(result: dict[str, Any]) -> tuple[dict[str, Any], str]:
    params = (result.get("metric_config") or {}).get("metric_parameters") or {}
    if not isinstance(params, dict):
        return {}, ""
    return dict(params), ";".join(f"{k}={_flat(params[k])}" for k in sorted(params))


def subset_of(evaluation_name: str | None, *names: str | None) -> str | None:
    """The part of ``evaluation_name`` that narrows the benchmark, or None when it is the benchmark.

    ``names`` are what the benchmark is already called (dataset name, registry name, the alias that
    matched): "GAIA - GAIA Level 1" under "GAIA" → "GAIA Level 1"; "Abstract Algebra" under
    "helm_mmlu" → "Abstract Algebra"; "IFEval" under "IFEval" → None.
    """
    if not evaluation_name or not evaluation_name.strip():
        return None
    text = " ".join(evaluation_name.split())
    own = {_loose(n) for n in names if n}
    loose = _loose(text)
    if loose in own or any(loose.endswith("." + n) for n in own):  # "artificial-analysis.gpqa" names gpqa
        return None
    for name in sorted((n for n in names if n), key=len, reverse=True):
        for sep in (" - ", ": ", " — ", " / "):
            prefix = f"{name}{sep}"
            if text.lower().startswith(prefix.lower()) and len(text) > len(prefix):
                return text[len(prefix) :].strip()
    return text


def _loose(name: str) -> str:
    return normalise_alias(name.replace("-", " ").replace("_", " "))


def cell_of(
    result: dict[str, Any], subset: str | None, harness: str | None, name_setup: dict[str, str] | None = None
) -> Cell:
    """The result's cell; ``name_setup`` is what the model's name says about the run ("(8-shot)"),
    which the record's own generation config overrides."""
    setup = {**(name_setup or {}), **setup_of(result, harness)}
    params, params_key = metric_params_of(result)
    return Cell(
        subset=subset, metric_params=params, metric_params_key=params_key, setup=setup, setup_key=setup_key(setup)
    )
