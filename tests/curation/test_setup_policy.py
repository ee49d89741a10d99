"""The setup policy: which setup fields define a cell, which are attributes of a candidate."""

from __future__ import annotations

import copy
import json

import pytest
from clirunner import CliRunner

from evalhouse.cli import app
from evalhouse.curation.cells import cell_of, setup_of
from evalhouse.curation.registry import load_registry
from evalhouse.curation.setup_policy import SetupPolicy, packaged_doc
from evalhouse.errors import InputError

POLICY = load_registry().setup_policy
runner = CliRunner()


def result(details: dict | None = None, args: dict | None = None) -> dict:
    return {"generation_config": {"additional_details": details or {}, "generation_args": args or {}}}


def test_every_field_has_a_role_and_a_reason() -> None:
    doc = packaged_doc()
    assert doc["unlisted"]["role"] == "defines"
    names = [f["field"] for f in doc["fields"]]
    assert len(names) == len(set(names))
    for f in doc["fields"]:
        assert f["role"] in ("defines", "attribute", "outcome"), f
        assert len(f["reason"].split()) >= 5, f"{f['field']}: a reason in words"
    roles = {f["field"]: f["role"] for f in doc["fields"]}
    # the list of fields that change the measured quantity, and the candidate's attributes
    for field in ("shots", "cot", "pass_at_k", "subset", "evaluator", "agent_scaffold", "prompting", "effort"):
        assert roles[field] == "defines", field
    assert roles["harness"] == roles["harness_version"] == "attribute"


def test_the_harness_is_an_attribute_so_two_harnesses_share_a_cell() -> None:
    a = cell_of(result({"shots": 5}), None, "inspect_ai", POLICY)
    b = cell_of(result({"shots": "5"}), None, "lm-evaluation-harness", POLICY)
    assert a.setup_key == b.setup_key == "shots=5"
    assert a.setup["harness"] == "inspect_ai" and b.setup["harness"] == "lm-evaluation-harness"
    # what the record states about shots still separates cells
    assert cell_of(result({"shots": 0}), None, "inspect_ai", POLICY).setup_key == "shots=0"


def test_spellings_of_one_field_meet_and_booleans_ignore_case() -> None:
    helm = POLICY.key({"use_chain_of_thought": "True", "num_few_shot": "0"})
    other = POLICY.key({"cot": "true", "shots": "0"})
    assert helm == other == "cot=true;shots=0"


def test_a_field_the_policy_does_not_name_defines_the_cell() -> None:
    assert not POLICY.listed("mystery_setting")
    assert POLICY.key({"mystery_setting": "x", "harness": "h"}) == "mystery_setting=x"


def test_two_spellings_that_disagree_keep_their_own_names() -> None:
    key = POLICY.key({"agent": "Terminus", "scaffold": "OpenHands"})
    assert key == "agent=Terminus;scaffold=OpenHands"
    assert POLICY.key({"agent": "Terminus", "scaffold": "Terminus"}) == "agent_scaffold=Terminus"


def test_outcome_fields_are_not_setup_and_long_values_are_hashed() -> None:
    setup = setup_of(result({"hal_rank": 3, "total_cost_usd": 1.5, "notes": "x"}, {"agentic_eval_config": "t" * 80}),
                     "HAL", POLICY)  # fmt: skip
    assert set(setup) == {"args.agentic_eval_config", "harness"} and setup["harness"] == "hal"
    key = POLICY.key(setup)
    assert key.startswith("tools=#") and len(key) == len("tools=#") + 10


def test_a_field_named_by_two_entries_is_refused() -> None:
    doc = copy.deepcopy(packaged_doc())
    doc["fields"].append({"field": "runner_name", "role": "attribute", "aliases": ["shots"], "reason": "clash"})
    with pytest.raises(InputError, match="'shots' is named by both"):
        SetupPolicy.from_doc(doc)


def test_curate_setup_policy_prints_every_field_with_its_reason() -> None:
    text = runner.invoke(app, ["curate", "setup-policy"], env={"COLUMNS": "200"})
    assert text.exit_code == 0, text.output
    for word in ("define a cell", "attributes of a candidate", "harness", "shots", "any other field: defines"):
        assert word in text.output, word
    data = json.loads(runner.invoke(app, ["curate", "setup-policy", "--json"]).output)
    assert {f["field"]: f["role"] for f in data["fields"]}["harness"] == "attribute"
    assert all(f["reason"] for f in data["fields"]) and data["unlisted"]["role"] == "defines"
