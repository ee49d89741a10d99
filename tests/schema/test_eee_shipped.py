"""The fast checks ship as data (``evalhouse/schema/eee_checks.json``): the file is what the models
give, and checking records with it never imports the models."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from evalhouse.common.resources import package_text
from evalhouse.schema import eee_dump
from evalhouse.schema.eee_check import SHIPPED

REWRITE = "rewrite it with '.venv/bin/python -m evalhouse.schema.eee_dump' after changing the models"


def test_the_shipped_checks_are_what_the_models_give() -> None:
    shipped = json.loads(package_text("evalhouse.schema", SHIPPED))
    derived = json.loads(json.dumps(eee_dump.derived_checks()))  # as JSON: tuples are lists there
    assert shipped["json_schema"] == derived["json_schema"], f"{SHIPPED} is stale: {REWRITE}"
    assert shipped["dump_plan"] == derived["dump_plan"], f"{SHIPPED} is stale: {REWRITE}"


def test_the_dump_plan_survives_its_json() -> None:
    plan = eee_dump.derived_plan()
    assert eee_dump.plan_from_json(json.loads(json.dumps(eee_dump.plan_to_json(plan)))) == plan
    assert plan[0] == "model" and "evaluation_results" in plan[1]  # a real plan, not an empty one


def test_write_shipped_writes_what_the_package_holds(tmp_path: Path) -> None:
    written = eee_dump.write_shipped(tmp_path / SHIPPED)
    assert written.read_text(encoding="utf-8") == package_text("evalhouse.schema", SHIPPED)


CHECK_REAL_PAYLOADS = """
import datetime, sys
from pathlib import Path
from evalhouse.ingest.catalog import get_source
from evalhouse.ingest.pinned import AA_CSV, EPOCH_DIR, epoch_zip
from evalhouse.ingest.source import FetchMeta
from evalhouse.schema.records import ParsedRecord
from evalhouse.warehouse.load.records import validate_record

shared = Path(sys.argv[1])
payloads = {"epoch-benchmarks": epoch_zip(shared / EPOCH_DIR), "artificial-analysis": (shared / AA_CSV).read_bytes()}
checked = 0
for key, body in payloads.items():
    meta = FetchMeta(key, "https://example.test/", "0" * 64, datetime.datetime.now(datetime.UTC))
    for item in get_source(key).parse(body, meta=meta):
        if isinstance(item, ParsedRecord):
            assert validate_record(item.record, json_text=False)[0] is not None, item.locator
            checked += 1
print(checked, "evalhouse.schema.eee" in sys.modules)
"""


def test_parsing_and_checking_the_real_payloads_never_imports_the_models(shared: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHECK_REAL_PAYLOADS, str(shared)], capture_output=True, text=True, check=True
    ).stdout.split()
    checked, imported = int(out[0]), out[1]
    assert checked == 3039 + 548  # every record the two pinned payloads hold (Epoch's loaded count + AA's)
    assert imported == "False"  # every record passed the shipped checks; none went to the models
