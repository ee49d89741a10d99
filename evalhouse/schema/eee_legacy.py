"""Every Eval Ever 0.2.x records brought to 0.3.0, step by documented step.

The EEE project migrates legacy files per collection (``every_eval_ever.adapters.rewardbench.
migrate_to_v030``, ``adapters.livecodebenchpro.adapter.migrate_file``), rewriting files in place.
Where the ``every-eval-ever`` package is installed and ships the collection's function, it is run
on a private copy of the record (its own rules, including the bounds it adds); the steps below
then only fill what it left. The collections without one (HELM, the Open LLM Leaderboard v2, HAL,
Global-MMLU-Lite) get the same generic steps those migrations apply, as a function of the record.
Each step that changed something is returned by name, and the loader adds it to the
canonicalisation steps of every score of the record, so ``audit score`` shows that the number
came from a migrated 0.2.x record and how.

Steps (each applied only where needed):

1. ``schema_version`` → ``0.3.0``;
2. a top-level ``source_data`` moves into every result that has none (0.3.0 keeps it per result);
3. ``eval_library`` (required in 0.3.0) is added as ``{"name": "unknown", "version": "unknown"}``
   when the record has none — evalhouse does not guess the harness;
4. ``model_info.inference_platform: "unknown"`` is dropped (optional in 0.3.0);
5. ``model_info.additional_details`` gains ``deployment_type`` / ``model_availability``
   ``"unknown"`` where missing (required in 0.3.0);
6. every ``additional_details`` / ``details`` map holds strings only: numbers become their decimal
   text, lists and objects their compact JSON (0.3.0 requires string values).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import tempfile
from pathlib import Path
from typing import Any

TARGET_VERSION = "0.3.0"
LEGACY_VERSIONS = frozenset({"0.1.0", "0.2.0", "0.2.1", "0.2.2", "0.2.3"})
#: Collections (or evaluation-id prefixes) whose migration the every-eval-ever package ships.
UPSTREAM_MIGRATIONS = {
    "reward-bench": "every_eval_ever.adapters.rewardbench.migrate_to_v030",
    "reward-bench-2": "every_eval_ever.adapters.rewardbench.migrate_to_v030",
    "livecodebenchpro": "every_eval_ever.adapters.livecodebenchpro.adapter",
}


def _upstream(record: dict[str, Any], collection: str | None) -> tuple[dict[str, Any] | None, str | None]:
    """The record migrated by the EEE project's own function for its collection, and the step
    saying so; ``(None, None)`` when there is none or the package is not installed, ``(None,
    reason)`` when the function refused the record (the generic steps are tried next)."""
    prefix = str(record.get("evaluation_id") or "").split("/", 1)[0]
    name = UPSTREAM_MIGRATIONS.get(collection or "") or UPSTREAM_MIGRATIONS.get(prefix)
    if name is None:
        return None, None
    try:
        module = importlib.import_module(name)
    except ImportError:  # the optional package is absent: the generic steps apply
        return None, None
    version = getattr(importlib.import_module("every_eval_ever"), "__version__", "installed")
    with tempfile.TemporaryDirectory(prefix="evalhouse-migrate-") as tmp:
        path = Path(tmp) / "record.json"
        path.write_text(json.dumps(record, allow_nan=False))
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                module.migrate_file(path)
        except ValueError as exc:
            why = " ".join(str(exc).split())[:240]
            return None, f"{name}.migrate_file refused the record ({why}); generic steps used"
        migrated = json.loads(path.read_text())
    return migrated, f"migrated by {name}.migrate_file (every-eval-ever {version})"


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value) if isinstance(value, float) else str(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _stringify(mapping: Any) -> tuple[Any, bool]:
    """A details map with string values only, and whether anything changed."""
    if not isinstance(mapping, dict):
        return mapping, False
    changed = any(not isinstance(v, str) for v in mapping.values())
    return ({k: _text(v) for k, v in mapping.items()} if changed else mapping), changed


def _stringify_results(results: list[Any]) -> bool:
    changed = False
    for result in results:
        if not isinstance(result, dict):
            continue
        details = result.get("score_details")
        if isinstance(details, dict) and "details" in details:
            details["details"], did = _stringify(details["details"])
            changed |= did
        gen = result.get("generation_config")
        if isinstance(gen, dict) and "additional_details" in gen:
            gen["additional_details"], did = _stringify(gen["additional_details"])
            changed |= did
        config = result.get("metric_config")
        if isinstance(config, dict) and "additional_details" in config:
            config["additional_details"], did = _stringify(config["additional_details"])
            changed |= did
    return changed


def _move_source_data(record: dict[str, Any], results: list[Any]) -> bool:
    if "source_data" not in record:
        return False
    shared = record.pop("source_data")
    for result in results:
        if isinstance(result, dict) and "source_data" not in result:
            result["source_data"] = json.loads(json.dumps(shared))
    return True


def _model_info(record: dict[str, Any], steps: list[str]) -> None:
    info = record.get("model_info")
    if not isinstance(info, dict):
        return
    if info.get("inference_platform") == "unknown":
        del info["inference_platform"]
        steps.append("dropped model_info.inference_platform 'unknown' (optional in 0.3.0)")
    details = info.get("additional_details")
    details = dict(details) if isinstance(details, dict) else {}
    added = [k for k in ("deployment_type", "model_availability") if k not in details]
    for key in added:
        details[key] = "unknown"
    details, stringified = _stringify(details)
    info["additional_details"] = details
    if added:
        steps.append(f"model_info.additional_details.{'/'.join(added)} = 'unknown' (required in 0.3.0)")
    if stringified:
        steps.append("model_info.additional_details values written as strings")


def migrate_legacy(record: dict[str, Any], collection: str | None = None) -> tuple[dict[str, Any], list[str]]:
    """A 0.2.x record as 0.3.0 and the steps that changed it (``[]`` for a 0.3.0 record).

    ``collection`` (the datastore folder) selects the EEE project's own migration where it ships
    one. The input is not modified. Raises ``ValueError`` for a version that is neither 0.3.0 nor
    a known legacy version.
    """
    version = record.get("schema_version")
    if version == TARGET_VERSION:
        return record, []
    if version not in LEGACY_VERSIONS:
        raise ValueError(
            f"schema_version {version!r} is neither {TARGET_VERSION} nor a legacy 0.x version evalhouse migrates"
        )
    steps = [f"migrated from EEE {version} to {TARGET_VERSION}"]
    upstream, note = _upstream(record, collection)
    if note:
        steps.append(note)
    out = upstream if upstream is not None else json.loads(json.dumps(record))
    out["schema_version"] = TARGET_VERSION
    results = out.get("evaluation_results") if isinstance(out.get("evaluation_results"), list) else []
    if _move_source_data(out, results):
        steps.append("top-level source_data moved into each result")
    if "eval_library" not in out:
        out["eval_library"] = {"name": "unknown", "version": "unknown"}
        steps.append("eval_library {'name': 'unknown', 'version': 'unknown'} added (required in 0.3.0)")
    _model_info(out, steps)
    meta = out.get("source_metadata")
    if isinstance(meta, dict) and "additional_details" in meta:
        meta["additional_details"], did = _stringify(meta["additional_details"])
        if did:
            steps.append("source_metadata.additional_details values written as strings")
    if _stringify_results(results):
        steps.append("result details values written as strings")
    return out, steps
