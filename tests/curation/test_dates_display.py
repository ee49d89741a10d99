"""'evalhouse dates --model': the configuration's own date first; a verified correction resolves a
conflict. On the real warehouse (Epoch + AA through the real refresh over loopback)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from clirunner import CliRunner
from realwarehouse import copy_warehouse

from evalhouse.cli import app

runner = CliRunner()


@pytest.fixture
def db(real_warehouse: Path, tmp_path: Path) -> Path:
    return copy_warehouse(real_warehouse, tmp_path)


def dates(db: Path, *args: str):
    return runner.invoke(app, ["--db", str(db), "dates", *args])


def test_a_dated_configuration_shows_its_own_date_before_the_base_models(db: Path) -> None:
    with duckdb.connect(str(db), read_only=True) as con:
        config, own, base, base_date = con.execute(
            "SELECT c.config_id, c.release_date, mc.base_model_id, r.release_date FROM v_config_release_date c"
            " JOIN model_config mc USING (config_id) JOIN v_release_date r USING (base_model_id)"
            " WHERE c.level = 'configuration' AND c.release_date <> r.release_date"
            " AND c.config_id = 'openai/gpt-4o|date=2024-08-06'"
        ).fetchone()
    result = dates(db, "--model", "gpt-4o-2024-08-06", "--json")
    assert result.exit_code == 0, result.output
    (item,) = json.loads(result.stdout)
    assert [c["config_id"] for c in item["configurations"]] == [config]
    chosen = item["configurations"][0]["chosen"]
    assert chosen["release_date"] == str(own) == "2024-08-06" and chosen["level"] == "configuration"
    assert {e["config_id"] for e in item["configurations"][0]["evidence"]} == {config}
    assert item["base_model"] == base and item["chosen"]["release_date"] == str(base_date)
    text = dates(db, "--model", "gpt-4o-2024-08-06").stdout
    assert text.index(f"configuration {config}: 2024-08-06") < text.index(f"base model {base}: {base_date}")


def test_a_verified_correction_resolves_the_conflict(db: Path) -> None:
    listed = json.loads(dates(db, "--conflicts", "--json").stdout)
    assert listed, "the real warehouse has release-date conflicts to resolve"
    with duckdb.connect(str(db), read_only=True) as con:
        base, config, earliest = con.execute(
            "SELECT mc.base_model_id, c.config_id, r.earliest FROM v_config_release_date c"
            " JOIN model_config mc USING (config_id) JOIN v_release_date r USING (base_model_id)"
            " WHERE c.conflict AND c.level = 'configuration' ORDER BY 1, 2 LIMIT 1"
        ).fetchone()
        n_before = con.execute("SELECT count(*) FROM release_date_evidence").fetchone()[0]
    assert base in {r["base_model_id"] for r in listed}
    before = json.loads(dates(db, "--model", config, "--json").stdout)[0]
    assert before["chosen"]["conflict"] and before["configurations"][0]["chosen"]["conflict"]
    assert "CONFLICT" in dates(db, "--model", config).stdout

    fixed = dates(db, "--model", config, "--correct", str(earliest), "--reason", "checked the announcement", "--json")
    assert fixed.exit_code == 0, fixed.output
    (after,) = json.loads(fixed.stdout)
    own = after["configurations"][0]
    assert own["chosen"]["kind"] == "manual_correction" and own["chosen"]["verification"] == "verified"
    assert own["chosen"]["release_date"] == str(earliest) and not own["chosen"]["conflict"]
    assert own["evidence"][0]["config_id"] == config and own["evidence"][0]["kind"] == "manual_correction"
    assert not after["chosen"]["conflict"]  # the base model's conflict was that configuration's
    assert base not in {r["base_model_id"] for r in json.loads(dates(db, "--conflicts", "--json").stdout)}
    assert "CONFLICT" not in dates(db, "--model", config).stdout
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM release_date_evidence").fetchone()[0] == n_before + 1  # added


def test_a_base_model_correction_resolves_every_claim_about_it(db: Path) -> None:
    listed = json.loads(dates(db, "--conflicts", "--json").stdout)
    base = listed[-1]["base_model_id"]
    fixed = dates(db, "--model", base, "--correct", str(listed[-1]["earliest"]), "--reason", "curator", "--json")
    assert fixed.exit_code == 0, fixed.output
    (after,) = json.loads(fixed.stdout)
    assert after["chosen"]["kind"] == "manual_correction" and not after["chosen"]["conflict"]
    assert after["evidence"][0]["config_id"] is None  # a base-model correction
    assert base not in {r["base_model_id"] for r in json.loads(dates(db, "--conflicts", "--json").stdout)}
