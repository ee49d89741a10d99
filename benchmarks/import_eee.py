"""Import throughput: 10,000 generated EEE records through `import-eee`, vs the EEE validator.

Prints records/s for evalhouse's import (raw store + validation + fingerprint + canonicalise +
one transaction per collection into a real DuckDB file) and, in the same run, the time the EEE
project's own validator (`python -m every_eval_ever validate`, if installed) takes over the same
files, with the ratio. Usage: `.venv/bin/python benchmarks/import_eee.py [N]`.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from evalhouse.pipeline.import_eee import import_tree
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore

BENCHES = ["mmlu", "gsm8k", "hellaswag", "arc_challenge", "truthfulqa"]


def record(i: int) -> dict:
    model = f"org-{i % 37}/model-{i}"
    return {
        "schema_version": "0.3.0",
        "evaluation_id": f"bench/{model}/{i}",
        "retrieved_timestamp": "1750000000",
        "source_metadata": {
            "source_type": "documentation",
            "source_organization_name": "Generated",
            "evaluator_relationship": "third_party",
        },
        "eval_library": {"name": "lm_eval", "version": "0.4.9"},
        "model_info": {
            "name": f"model-{i}",
            "id": model,
            "developer": f"org-{i % 37}",
            "additional_details": {"deployment_type": "unknown", "model_availability": "open_weights"},
        },
        "evaluation_results": [
            {
                "evaluation_name": bench,
                "source_data": {"dataset_name": bench, "source_type": "other"},
                "metric_config": {
                    "metric_id": "accuracy",
                    "metric_unit": "proportion",
                    "lower_is_better": False,
                    "score_type": "continuous",
                    "min_score": 0.0,
                    "max_score": 1.0,
                },
                "score_details": {"score": ((i * 7 + k * 13) % 100) / 100},
            }
            for k, bench in enumerate(BENCHES)
        ],
    }


def main(n: int = 10_000) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="evalhouse-bench-"))
    try:
        tree = tmp / "tree"
        for i in range(n):
            rec = record(i)
            dev, model = rec["model_info"]["id"].split("/")
            path = tree / "data" / "generated" / dev / model / f"{uuid.UUID(int=i, version=4)}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(rec))
        t0 = time.perf_counter()
        with Warehouse.open(tmp / "w.duckdb") as wh:
            summary = import_tree(wh, tree, RawStore(tmp / "raw"))
        ours = time.perf_counter() - t0
        loaded = summary.as_dict()["records_loaded"]
        assert loaded == n, f"expected {n} records loaded, got {loaded}"
        print(
            f"evalhouse import-eee: {n} records ({n * len(BENCHES)} scores) in {ours:.2f} s = {n / ours:,.0f} records/s"
        )

        files = [str(p) for p in (tree / "data").rglob("*.json")]
        try:
            import every_eval_ever  # noqa: F401
        except ImportError:
            print("every-eval-ever is not installed: no validator comparison (pip install every-eval-ever)")
            return
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "every_eval_ever", "validate", *files],
            check=False,
            capture_output=True,
            text=True,
            cwd=tree,
        )
        theirs = time.perf_counter() - t0
        status = "passed" if proc.returncode == 0 else f"exit {proc.returncode}"
        print(f"every_eval_ever validate ({status}): {n} files in {theirs:.2f} s = {n / theirs:,.0f} files/s")
        print(f"ratio: evalhouse full import takes {ours / theirs:.2f}x the time of EEE validation alone")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
