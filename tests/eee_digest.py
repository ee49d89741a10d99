"""A content digest of what EEE datastore trees become: every table an import writes.

Recorded once (``tests/pipeline/data/eee_import_digest.json``, written by ``python
tests/eee_digest.py record`` from the repo root) with the row-by-row loader, and compared by
``tests/pipeline/test_eee_digest.py`` after every change to the load path: the same rows,
quarantines (reasons, locators, payloads), decisions and fingerprints, table by table and column by
column, for two trees imported twice each (the second import unchanged):

* the real legacy datastore (``../shared/datasets/eee-datastore-legacy``, 2,792 records of schema
  0.2.x, migrated on the way in), and
* :func:`write_edge_tree`: EEE 0.3.0 records written here to reach every branch of the load —
  exact duplicates, two records under one ``evaluation_id``, files that are not JSON, empty, NaN,
  duplicate keys, invalid records, values outside their bounds, HELM's -1.0 placeholder, percent
  and unit-less results, unmapped metrics, uncertainty, LLM scoring, metric parameters, release
  dates, a samples file with a bad line, hostile and non-ASCII strings, floats Python and orjson
  spell differently.

Columns that name the run or the clock are left out (see :mod:`pinned_digest`); the fetch rows keep
what is content (sha256, label, size, content type), not where the store put the bytes.
A table digest covers the columns the recorded digest names, so a column added later does not
change it (its own test says what it holds).
"""

from __future__ import annotations

import json
import random
import sys
import uuid
from pathlib import Path
from typing import Any

from pinned_digest import SERIAL, VOLATILE, _cell, _digest
from pinned_digest import TABLES as REFRESH_TABLES

DIGEST_FILE = Path(__file__).parent / "pipeline" / "data" / "eee_import_digest.json"
LEGACY = "datasets/eee-datastore-legacy"
#: The tables a refresh's digest holds, but the registry's aliases (an import adds none).
TABLES = tuple(t for t in REFRESH_TABLES if t not in ("benchmark_alias", "metric_alias"))
#: The fetch rows' content (fetch ids, times and storage paths are not).
RAW_COLUMNS = ("sha256", "source_key", "size_bytes", "content_type", "label")  # url: file:// of the tree
#: Decision details that name a run (the unchanged-files summary's subject).
RUN_NAMING_DECISIONS = ("unchanged_files_skipped",)


def table_digest(con: Any, table: str, columns: list[str] | None = None) -> dict[str, Any]:
    """Row count, one digest per stable column and one over whole rows of those columns."""
    if columns is None:
        described = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]
        columns = [c for c in described if c not in VOLATILE and not c.endswith("_run_id")]
    columns = sorted(columns)  # the recorded digest lists them sorted: whole rows join them in that order
    where = ""
    if table == "curation_decision":
        where = " WHERE kind NOT IN ({})".format(", ".join(f"'{k}'" for k in RUN_NAMING_DECISIONS))
    rows = con.execute(f"SELECT {', '.join(columns)} FROM {table}{where}").fetchall()
    cells = [[_cell(v, c) for v, c in zip(r, columns, strict=True)] for r in rows]
    per_column = {c: _digest([r[i] for r in cells]) for i, c in enumerate(columns)}
    keep = [i for i, c in enumerate(columns) if c not in SERIAL]
    whole = _digest(["\t".join(r[i] for i in keep) for r in cells])
    return {"rows": len(rows), "columns": per_column, "whole_rows": whole}


def _rng_uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _record(model_id: str, results: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    record = {
        "schema_version": "0.3.0",
        "evaluation_id": f"edge/{model_id}/1",
        "retrieved_timestamp": "1750000000",
        "source_metadata": {
            "source_name": "Edge board",
            "source_type": "documentation",
            "source_organization_name": "Edge",
            "evaluator_relationship": "third_party",
        },
        "eval_library": {"name": "lm_eval", "version": "0.4.9"},
        "model_info": {
            "name": model_id.rsplit("/", 1)[-1],
            "id": model_id,
            "developer": model_id.split("/", 1)[0],
            "additional_details": {"deployment_type": "unknown", "model_availability": "open_weights"},
        },
        "evaluation_results": results,
    }
    record.update(extra)
    return record


def _result(name: str, score: float, **config: Any) -> dict[str, Any]:
    metric = {
        "evaluation_description": f"Accuracy on {name}",
        "metric_id": "accuracy",
        "metric_name": "Accuracy",
        "metric_unit": "proportion",
        "lower_is_better": False,
        "score_type": "continuous",
        "min_score": 0.0,
        "max_score": 1.0,
    }
    metric.update({k: v for k, v in config.items() if k not in ("details", "generation_config", "source_data")})
    result: dict[str, Any] = {
        "evaluation_name": name,
        "source_data": config.get("source_data") or {"dataset_name": name, "source_type": "other"},
        "metric_config": {k: v for k, v in metric.items() if v is not None},
        "score_details": {"score": score, **(config.get("details") or {})},
    }
    if config.get("generation_config") is not None:
        result["generation_config"] = config["generation_config"]
    return result


def edge_records(rng: random.Random) -> list[tuple[str, str, bytes]]:  # noqa: PLR0915 - one case after another
    """``(collection, relative path, bytes)`` of the edge tree, deterministic in ``rng``."""
    files: list[tuple[str, str, bytes]] = []

    def put(collection: str, model_id: str, content: bytes | str | dict[str, Any]) -> str:
        if isinstance(content, dict):
            content = json.dumps(content)
        data = content if isinstance(content, bytes) else content.encode()
        rel = f"{collection}/{model_id}/{_rng_uuid(rng)}.json"
        files.append((collection, rel, data))
        return rel

    benches = ("gsm8k", "mmlu", "hellaswag", "arc_challenge", "truthfulqa", "winogrande", "edge_task_x")
    generations = (
        None,
        {"generation_args": {"temperature": 0.0, "max_tokens": 1024}},
        {"generation_args": {"temperature": 0.7, "top_p": 0.95}, "additional_details": {"n": "5"}},
    )
    # ordinary records: several runs of one model, varied uncertainty, setup and units
    for i in range(60):
        model = f"edge-org/Model{i // 3}-{(i % 4) + 1}B" + ("-Instruct" if i % 5 == 0 else "")
        results = []
        for k, bench in enumerate(benches[: 3 + i % 5]):
            details: dict[str, Any] = {}
            if k % 2 == 0:
                details["uncertainty"] = {
                    "standard_error": {"value": round(rng.random() / 40, 6)},
                    "confidence_interval": {"lower": 0.1, "upper": 0.9, "confidence_level": 0.95},
                    "num_samples": 100 + k,
                }
            unit = ("proportion", "percent", None)[(i + k) % 3]
            score = round(rng.random(), 4)
            upper = 1.0
            if unit == "percent":
                score, upper = round(score * 100, 2), 100.0
            results.append(
                _result(
                    bench,
                    score,
                    metric_unit=unit,
                    max_score=upper,
                    details=details,
                    generation_config=generations[(i + k) % 3],
                )
            )
        extra: dict[str, Any] = {}
        if i % 7 == 0:
            extra["evaluation_timestamp"] = "2025-06-01T00:00:00Z"
        rec = _record(model, results, evaluation_id=f"edge/{model}/{1750000000 + i}", **extra)
        if i % 6 == 0:
            rec["model_info"]["additional_details"]["release_date"] = f"2024-{(i % 12) + 1:02d}-15"
        if i % 4 == 0:
            rec["model_info"]["additional_details"]["precision"] = "bfloat16"
        put("edge-a" if i % 2 else "edge-b", model, rec)
    # an exact duplicate (another file, the same content but its fetch time) and an id collision
    base = _record("edge-org/Dup-7B", [_result("gsm8k", 0.5)], evaluation_id="edge/dup/1")
    put("edge-a", "edge-org/Dup-7B", base)
    put("edge-a", "edge-org/Dup-7B", {**base, "retrieved_timestamp": "1760000000"})
    put("edge-a", "edge-org/Dup-7B", _record("edge-org/Dup-7B", [_result("gsm8k", 0.51)], evaluation_id="edge/dup/1"))
    # a record with no evaluation_id (evalhouse assigns one), one result twice in one record
    put(
        "edge-a",
        "edge-org/NoId",
        {k: v for k, v in _record("edge-org/NoId", [_result("mmlu", 0.3)]).items() if k != "evaluation_id"},
    )
    put("edge-a", "edge-org/Twice", _record("edge-org/Twice", [_result("mmlu", 0.3), _result("mmlu", 0.3)]))
    # values the load refuses (quarantined results) beside ones it keeps
    put(
        "edge-a",
        "edge-org/Bad-Values",
        _record(
            "edge-org/Bad-Values",
            [
                _result("gsm8k", 1.7, max_score=2.0),  # within its own bounds, impossible as a proportion
                _result("mmlu", 1.5),  # outside the record's own bounds
                _result("hellaswag", -1.0),  # HELM's placeholder
                _result("arc_challenge", 0.25, metric_id="frobnication", metric_name="Frobnication"),
                _result("truthfulqa", 0.4, metric_id=None, metric_name=None, evaluation_description=None),
                _result("winogrande", 12.0, metric_unit="furlongs"),
                _result("edge_task_x", 0.61),
            ],
        ),
    )
    # uncertainty beyond floats both writers agree on, LLM scoring, metric parameters
    put(
        "edge-b",
        "edge-org/Floaty",
        _record(
            "edge-org/Floaty",
            [
                _result("gsm8k", 1e-05, details={"uncertainty": {"standard_error": {"value": 2.5e-07}}}),
                _result("mmlu", 0.1 + 0.2, details={"uncertainty": {"num_samples": 10**6}}),
                _result(
                    "humaneval",
                    0.42,
                    metric_id="pass_at_k",
                    metric_name="pass@k",
                    metric_parameters={"k": 8},
                ),
                _result("humaneval", 0.33, metric_id="pass_at_k", metric_name="pass@k", metric_parameters={"k": 1}),
                _result(
                    "mt_bench",
                    0.8,
                    llm_scoring={
                        "judges": [{"model_info": {"name": "gpt-4o", "id": "openai/gpt-4o", "developer": "openai"}}],
                        "input_prompt": "Rate the answer.",
                    },
                ),
            ],
        ),
    )
    # hostile and non-ASCII text
    put("edge-b", "edge-org/hostile", _record("edge-org/'; DROP TABLE score; --", [_result("gsm8k", 0.2)]))
    put("edge-b", "edge-org/unicode", _record("edge-org/Modèle-Ünïcode-7B", [_result("mmlu ✓", 0.2)]))
    # files that are not records
    put("edge-b", "edge-org/notjson", "this is not json {")
    put("edge-b", "edge-org/empty", b"")
    nan = json.dumps(_record("edge-org/NaN", [_result("gsm8k", 0.5)])).replace('"score": 0.5', '"score": NaN')
    put("edge-b", "edge-org/NaN", nan)
    dup_keys = json.dumps(_record("edge-org/DupKey", [_result("gsm8k", 0.5)])).replace(
        '"score": 0.5', '"score": 0.5, "score": 0.6'
    )
    put("edge-b", "edge-org/DupKey", dup_keys)
    invalid = _record("edge-org/Invalid", [_result("gsm8k", 0.5)])
    del invalid["eval_library"]
    put("edge-b", "edge-org/Invalid", invalid)
    put("edge-b", "edge-org/Version", {**_record("edge-org/Version", [_result("gsm8k", 0.5)]), "schema_version": "9.9"})
    big = json.dumps(_record("edge-org/BigInt", [_result("gsm8k", 0.5, details={"uncertainty": {"num_samples": 7}})]))
    put("edge-b", "edge-org/BigInt", big.replace('"num_samples": 7', '"num_samples": 123456789012345678901234'))
    return files


def write_edge_tree(root: Path, seed: int = 7) -> Path:
    """The edge tree under ``root/data`` (with a samples file beside one record); returns ``root``."""
    rng = random.Random(seed)
    for _collection, rel, data in edge_records(rng):
        path = root / "data" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    # a samples file: good lines and one that is not an instance record
    target = sorted((root / "data" / "edge-a").rglob("*.json"))[0]
    record = json.loads(target.read_text())
    line = {
        "schema_version": "0.3.0",
        "evaluation_id": record["evaluation_id"],
        "model_id": record["model_info"]["id"],
        "evaluation_name": record["evaluation_results"][0]["evaluation_name"],
        "sample_id": "s1",
        "interaction_type": "single_turn",
        "input": {"raw": "2+2?", "reference": ["4"]},
        "output": {"raw": ["4"]},
        "answer_attribution": [
            {
                "turn_idx": 0,
                "source": "output.raw",
                "extracted_value": "4",
                "extraction_method": "exact_match",
                "is_terminal": True,
            }
        ],
        "evaluation": {"score": 1.0, "is_correct": True},
    }
    samples = target.with_name(target.stem + "_samples.jsonl")
    samples.write_text(json.dumps(line) + "\n" + json.dumps({"not": "an instance"}) + "\n")
    return root


def import_digest(con: Any, recorded: dict[str, Any] | None = None) -> dict[str, Any]:
    """The digest of every table an import writes (``recorded``: compare on its columns only)."""
    out = {}
    for table in TABLES:
        columns = list(recorded[table]["columns"]) if recorded else None
        out[table] = table_digest(con, table, columns)
    out["raw_snapshot"] = table_digest(con, "raw_snapshot", list(RAW_COLUMNS))
    return out


def run_counts(summary: Any) -> list[dict[str, Any]]:
    """Each run's counts and status, by source (run ids and durations left out)."""
    rows = []
    for run in summary.runs:
        d = run.as_dict()
        rows.append(
            {k: d[k] for k in ("source", "status", "read", "loaded", "quarantined", "duplicate", "scores")}
            | {"reasons": d["quarantine_reasons"], "decisions": d["decisions"]}
        )
    return sorted(rows, key=lambda r: r["source"])


#: The tables whose row counts :func:`import_twice` keeps after each import.
COUNT_TABLES = ("raw_snapshot", "quarantine", "evaluation", "score", "curation_decision", "model_config")


def import_twice(tree: Path, db: Path) -> dict[str, Any]:
    """Import ``tree`` twice into a new warehouse ``db`` (the second import unchanged), as a nightly
    import does (a checkpoint after each collection's load): both imports' results, the row counts
    of :data:`COUNT_TABLES` after each and how long the first import took (seconds)."""
    import time

    from evalhouse.config import raw_store_path
    from evalhouse.pipeline.import_eee import import_tree
    from evalhouse.warehouse.db import Warehouse
    from evalhouse.warehouse.load.ledger import checkpoint
    from evalhouse.warehouse.raw.store import RawStore

    def counts(wh: Any) -> dict[str, int]:
        return {t: int(wh.scalar(f"SELECT count(*) FROM {t}")) for t in COUNT_TABLES}

    store = RawStore(raw_store_path(db))
    start = time.monotonic()
    with Warehouse.open(db) as wh:
        first = import_tree(wh, tree, store, after_load=checkpoint())
        seconds = time.monotonic() - start
        after_first = counts(wh)
        second = import_tree(wh, tree, store, after_load=checkpoint())
        after_second = counts(wh)
    return {
        "first": first,
        "second": second,
        "after_first": after_first,
        "after_second": after_second,
        "seconds": seconds,
    }


def build(tree: Path, db: Path) -> dict[str, Any]:
    """Import ``tree`` twice into a new warehouse ``db``; the two imports' run counts."""
    twice = import_twice(tree, db)
    return {"first": run_counts(twice["first"]), "second": run_counts(twice["second"])}


def current(
    shared: Path, tmp: Path, recorded: dict[str, Any] | None = None, legacy: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The digest of both trees, each imported twice into a new warehouse in ``tmp`` (``legacy``: the
    legacy tree's :func:`import_twice` done already, its ``db`` a copy to read)."""
    from evalhouse.warehouse.db import Warehouse

    out: dict[str, Any] = {}
    for name in ("legacy", "edge"):
        if name == "legacy" and legacy is not None:
            db, runs = legacy["db"], {k: run_counts(legacy[k]) for k in ("first", "second")}
        else:
            tree = shared / LEGACY if name == "legacy" else write_edge_tree(tmp / "edge-tree")
            db = tmp / f"{name}.duckdb"
            runs = build(tree, db)
        with Warehouse.open(db, read_only=True) as wh:
            out[name] = {"runs": runs, "tables": import_digest(wh.con, (recorded or {}).get(name, {}).get("tables"))}
    return out


if __name__ == "__main__":  # record: python tests/eee_digest.py record [shared] (from the repo root)
    import tempfile

    sys.path.insert(0, str(Path(__file__).parent))
    shared = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(__file__).resolve().parents[2] / "shared"
    with tempfile.TemporaryDirectory() as tmp:
        digest = current(shared, Path(tmp))
    if sys.argv[1:2] == ["record"]:
        DIGEST_FILE.write_text(json.dumps(digest, indent=1, sort_keys=True) + "\n")
    else:
        print(json.dumps(digest, indent=1, sort_keys=True))
