"""Cell identity: what makes two results the same measurement, beyond model and benchmark.

A cell is model configuration × benchmark × **subset** (an MMLU subject, a Global-MMLU language, a
GAIA level — taken from the record's ``evaluation_name``) × metric × **metric parameters** (pass@1
vs pass@8) × the **defining part of the setup** (shots, chain of thought, agent scaffold, tools,
prompt template, generation arguments, judge, effort). Two results that differ in any of these are
different cells: they are never superseded by, averaged with or compared against each other.

A result's setup is everything its record's ``generation_config`` states (except the fields that
report how a run went: rank, cost, run count, notes), what the model's name says about the run
("(8-shot)"), and the harness that ran it. Which of those define the cell and which are
attributes of a candidate (the harness, its version) is the setup policy
(:mod:`evalhouse.curation.setup_policy`): results that differ only in attributes share a cell,
and their spread is the sources' disagreement. The whole setup is stored with each score; the
cell key is its defining part, ``name=value`` sorted, a value too long to read as a short hash.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from evalhouse.curation.registry import normalise_alias
from evalhouse.curation.setup_policy import SetupPolicy


@dataclass(frozen=True)
class Cell:
    """A result's cell beyond model, benchmark and metric, and its whole setup."""

    subset: str | None
    metric_params: dict[str, Any]
    metric_params_key: str
    setup: dict[str, str]  # the whole setup: defining fields and attributes (what score.setup stores)
    setup_key: str  # its defining part (the cell)


def _flat(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, separators=(",", ":"))


def setup_of(
    result: dict[str, Any], harness: str | None, policy: SetupPolicy, name_setup: dict[str, str] | None = None
) -> dict[str, str]:
    """The result's whole setup: what the model's name says about the run ("(8-shot)"), overridden
    by everything the generation config states (minus the fields that report how a run went), and
    the harness (normalised: "HAL" and "hal" are one harness)."""
    gen = result.get("generation_config") or {}
    setup: dict[str, str] = dict(name_setup or {})
    for key, value in (gen.get("additional_details") or {}).items():
        if value not in (None, "") and policy.role(key) != "outcome":
            setup[key] = _flat(value)
    for key, value in (gen.get("generation_args") or {}).items():
        if value not in (None, "", {}, []) and policy.role(f"args.{key}") != "outcome":
            setup[f"args.{key}"] = _flat(value)
    if harness and "harness" not in setup:
        setup["harness"] = normalise_alias(harness)
    return setup


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
    result: dict[str, Any],
    subset: str | None,
    harness: str | None,
    policy: SetupPolicy,
    name_setup: dict[str, str] | None = None,
) -> Cell:
    """The result's cell; ``name_setup`` is what the model's name says about the run ("(8-shot)"),
    which the record's own generation config overrides."""
    setup = setup_of(result, harness, policy, name_setup)
    params, params_key = metric_params_of(result)
    return Cell(
        subset=subset,
        metric_params=params,
        metric_params_key=params_key,
        setup=setup,
        setup_key=policy.key(setup),
    )
