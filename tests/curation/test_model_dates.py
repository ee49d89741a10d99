"""One date vocabulary for configuration ids, and the snapshot registry that resolves short dates
and aliases. Expected values are written from the rules (evalhouse.curation.names.dates and
.snapshots, docs/model-identity.md) and the registry's documented snapshots, not copied from output."""

from __future__ import annotations

from datetime import date

import pytest
import yaml

from evalhouse.common.yamls import load_package_yaml
from evalhouse.curation.name_rules import rules_from
from evalhouse.curation.names import NameHints, read_settings, resolve
from evalhouse.curation.names.dates import combine, name_dates, parse_iso, stated_day, without_dates
from evalhouse.curation.registry import load_registry
from evalhouse.curation.registry_version import read_file
from evalhouse.curation.snapshot_rules import SnapshotRulesError, book_from

REG = load_registry()
RULES = REG.name_rules
assert RULES is not None


def dated(name: str, source: str | None = None, **hints: object):
    return resolve(name, REG, source=source, hints=NameHints(**hints))  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# What a name writes
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "iso"),
    [
        ("gpt-4o-2024-08-06", "2024-08-06"),
        ("claude-opus-4-20250514", "2025-05-14"),
        ("chatgpt-4o-03-27-2025", "2025-03-27"),
        ("mita-v1.1-7b-2-24-2025", "2025-02-24"),
        ("gpt-4o (aug '24)", "2024-08"),
        ("gemini 2.5 pro preview (may' 25)", "2025-05"),
        ("o4-mini high (april 2025)", "2025-04"),
        ("command-r-08-2024", "2024-08"),
        ("phi-3-mini-4k-instruct-june-2024", "2024-06"),
        ("step-2-16k-202411", "2024-11"),
        ("solar-pro-241126", "2024-11-26"),
        ("mistral-large-2411", "2024-11"),  # YYMM: 24 is no month
        ("qwen3 235b a22b 2507", "2025-07"),
        ("deepseek-r1-0528", "--05-28"),  # MMDD: no year written
        ("gemini-2.5-pro-preview-06-05", "--06-05"),
        ("gemini-exp-1206", "--12-06"),
        ("deepseek r1 0528 (may '25)", "2025-05-28"),  # the month gives the month-day its year
        ("qwq-32b-coder-fusion-7030", None),  # 70/30 is no date
        ("llama32 3b en emo 1000 stp", None),
        ("r1 1776", None),
        ("gpt-4o", None),
    ],
)
def test_the_date_a_name_writes(text: str, iso: str | None) -> None:
    found = combine(name_dates(text))
    assert (found.iso if found else None) == iso


def test_a_stamp_that_could_be_month_year_says_so_and_dates_leave_the_key() -> None:
    (olmo,) = name_dates("olmo-2-1124-13b-instruct")
    assert olmo.iso == "--11-24" and olmo.as_month_year().iso == "2024-11"
    assert without_dates("DeepSeek-R1-0528 (May '25)").split() == ["DeepSeek-R1-", "(", ")"]
    assert "7030" in without_dates("QwQ-32B-Coder-Fusion-7030")


def test_only_a_full_day_in_a_sources_identifier_is_read() -> None:
    assert stated_day("openai/gpt-4o-2024-08-06") == date(2024, 8, 6)
    assert stated_day("anthropic/claude-3-opus-20240229") == date(2024, 2, 29)
    assert stated_day("openai/gpt-5-5-instant-05-26") is None  # AA's slug: May 2026, not 26 May
    assert stated_day("deepseek/deepseek-v3-2-0925") is None
    assert parse_iso("--05-28") is not None and parse_iso("2024-13") is None and parse_iso("0528") is None


def test_settings_carry_the_names_own_date_in_the_vocabulary() -> None:
    assert read_settings("deepseek-r1-0528", RULES).date_tag == "--05-28"
    assert read_settings("mistral-large-2411", RULES).date_tag == "2024-11"
    assert read_settings("Mistral Large 2 (Nov '24)", RULES).date_tag == "2024-11"


# --------------------------------------------------------------------------------------------
# Resolved against evidence
# --------------------------------------------------------------------------------------------


def test_a_short_date_takes_its_year_from_the_documented_snapshot() -> None:
    assert dated("deepseek-r1-0528").configuration == "deepseek/deepseek-r1|date=2025-05-28"
    assert dated("gpt-4-0613").configuration == "openai/gpt-4|date=2023-06-13"
    link = dated("deepseek-r1-0528").links[0]
    assert link.kind == "date" and link.evidence and link.evidence.startswith("https://")


def test_a_short_date_without_a_documented_snapshot_takes_the_stated_release_year_or_stays_year_less() -> None:
    assert dated("OpenChat 3.5 (1210)", release_date="2023-12-18").configuration.endswith("|date=2023-12-10")
    assert dated("OpenChat 3.5 (1210)").configuration.endswith("|date=--12-10")
    far = dated("OpenChat 3.5 (1210)", release_date="2023-06-10")  # half a year from any 10 December
    assert far.configuration.endswith("|date=--12-10") and not far.links


def test_a_month_becomes_a_day_only_when_one_snapshot_of_that_month_is_documented() -> None:
    assert dated("GPT-4o (Nov '24)").configuration == "openai/gpt-4o|date=2024-11-20"
    dec = dated("Gemini 2.0 Flash Thinking Experimental (Dec '24)")
    assert dec.configuration.endswith("|date=2024-12")  # two exp snapshots that month: kept apart
    (candidate,) = [link for link in dec.links if link.kind == "candidate"]
    assert {c.rsplit("date=", 1)[1] for c in candidate.configurations} == {"2024-12-11", "2024-12-19"}
    assert dated("Gemini 1.5 Pro (May '24)").configuration == "google/gemini-1.5-pro|date=2024-05"  # no registry


def test_the_day_a_sources_own_identifier_states_makes_its_month_precise() -> None:
    aug = dated("GPT-4o (Aug '24)", source_id="openai/gpt-4o-2024-08-06")
    assert aug.configuration == "openai/gpt-4o|date=2024-08-06"
    assert "openai/gpt-4o-2024-08-06" in aug.links[0].rule
    assert dated("Claude 3 Opus", source_id="claude-3-opus-20240229").configuration.endswith("|date=2024-02-29")


def test_an_alias_denotes_the_snapshot_of_the_day_it_was_observed() -> None:
    """gpt-4o moved from 2024-05-13 to 2024-08-06 on 2 October 2024 (OpenAI's notice)."""
    before = dated("gpt-4o", observed_on=date(2024, 9, 30))
    after = dated("gpt-4o", observed_on=date(2024, 10, 2))
    assert before.configuration == "openai/gpt-4o|date=2024-05-13"
    assert after.configuration == "openai/gpt-4o|date=2024-08-06"
    assert after.links[0].kind == "alias" and "github.com/ogkalu2" not in (after.links[0].evidence or "")
    assert before.links[0].evidence == "https://github.com/ogkalu2/comic-translate/issues/138"
    undated = dated("gpt-4o")  # no observation date: which snapshot is not known
    assert undated.configuration == "openai/gpt-4o" and undated.needs_observation
    assert {link.kind for link in undated.links} == {"candidate"}


def test_an_alias_that_only_ever_denoted_one_snapshot_needs_no_date() -> None:
    assert dated("GPT-4.1").configuration == "openai/gpt-4.1|date=2025-04-14"
    assert dated("claude-3-5-haiku-latest").configuration == "anthropic/claude-3.5-haiku|date=2024-10-22"
    assert not dated("GPT-4.1").needs_observation


def test_a_stated_release_date_picks_the_snapshot_or_refuses_the_alias() -> None:
    assert dated("DeepSeek-R1", release_date="2025-01-20", observed_on=date(2025, 11, 1)).configuration == (
        "deepseek/deepseek-r1|date=2025-01-20"
    )  # after the 0528 release the name alone is ambiguous; the stated release is not
    turbo = dated("GPT-4 Turbo", release_date="2023-11-06", observed_on=date(2026, 7, 6))
    assert turbo.configuration == "openai/gpt-4-turbo"  # the alias's 2024-04-09 is five months later
    assert [link.kind for link in turbo.links] == ["candidate"]


def test_a_checkpoint_is_a_version_not_an_alias() -> None:
    assert dated("gemini-2.0-flash-001").configuration == "google/gemini-2.0-flash|checkpoint=001"


def test_a_family_that_writes_month_year_stamps() -> None:
    olmo = dated("allenai/olmo-2-1124-7b-instruct", source="eee-helm-capabilities")
    assert olmo.configuration == "allenai/olmo-2-7b-instruct|date=2024-11"
    assert olmo.links[0].evidence == "https://huggingface.co/allenai/OLMo-2-1124-7B"


def test_a_lines_default_reasoning_mode_is_stated_with_its_evidence() -> None:
    plain = dated("claude-3-7-sonnet-20250219")
    assert plain.configuration == dated("Claude 3.7 Sonnet (Non-reasoning)").configuration
    assert plain.settings.reasoning_mode == "non_reasoning"
    (mode,) = [link for link in plain.links if link.kind == "mode"]
    assert mode.evidence == "https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking"
    assert dated("Claude 3.7 Sonnet (Reasoning)").configuration != plain.configuration
    assert dated("Claude 3 Opus").settings.reasoning_mode is None  # no hybrid mode documented


def test_a_thinking_budget_reads_in_thousands() -> None:
    assert "|budget=32k|" in dated("claude-opus-4-20250514_32K").configuration
    assert dated("x (32k think)", details={"thinking_budget": 32768}).settings.qualifiers() == (
        dated("x (32k think)").settings.qualifiers()
    )  # 32,768 and 32,000 are one "32k" knob


# --------------------------------------------------------------------------------------------
# The registry
# --------------------------------------------------------------------------------------------


def test_every_registry_line_is_reached_by_its_example() -> None:
    """Each line names a real example; resolving it lands on the line (so changed rules cannot
    orphan a line), and its snapshots and alias windows are ordered and documented."""
    book = RULES.snapshots
    assert len(book.lines) >= 40
    for key, line in book.lines.items():
        ident = resolve(line.example, REG)
        parts = [ident.base_model]
        if ident.settings.preview:
            parts.append(f"preview={ident.settings.preview}")
        if ident.settings.alias == "chatgpt":
            parts.append("alias=chatgpt")
        assert "|".join(parts) == key, (line.example, key)
        assert line.evidence.startswith("https://")
        assert all(w.snapshot in line.snapshots for w in line.aliases)


def _raw() -> dict:
    return load_package_yaml(read_file("model_snapshots.yaml"))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda r: r["lines"][0].update(snapshots=["2024-13-01"]), "month must be in 1..12"),
        (lambda r: r["lines"][0].update(snapshots=["0528"]), "not an ISO date"),
        (lambda r: r["lines"][0].update(evidence="the docs"), "must be a URL"),
        (lambda r: r["lines"][0]["alias"][0].update(snapshot="2030-01-01"), "not one of the line's snapshots"),
        (lambda r: r["lines"][0]["alias"][0].update(until="2025-01-01"), "overlap"),
        (lambda r: r["lines"].append(dict(r["lines"][0])), "listed twice"),
        (lambda r: r["lines"][0].update(line="GPT 4o"), "is not"),
        (lambda r: r["lines"][0].update(default_mode="sometimes"), "default_mode"),
        (lambda r: r.pop("version"), "version"),
    ],
)
def test_a_malformed_registry_is_refused_naming_the_entry(change, message: str) -> None:
    raw = yaml.safe_load(yaml.safe_dump(_raw()))  # a deep copy
    change(raw)
    with pytest.raises(SnapshotRulesError, match=message):
        book_from(raw)


def test_the_registry_travels_with_the_rules_and_its_version() -> None:
    assert REG.versions["model_snapshots"] == _raw()["version"]
    bare = rules_from(REG.model_tokens)  # without the file: nothing documented, nothing resolved
    assert not bare.snapshots.lines


def test_models_resolve_takes_the_evidence_a_source_states_and_shows_the_links() -> None:
    import json

    from clirunner import CliRunner

    from evalhouse.cli import app

    runner = CliRunner()
    args = ["models", "resolve", "GPT-4o (Aug '24)", "--id", "openai/gpt-4o-2024-08-06", "--json"]
    data = json.loads(runner.invoke(app, args).stdout)
    assert data["configuration"] == "openai/gpt-4o|date=2024-08-06"
    assert [link["kind"] for link in data["links"]] == ["date"]
    text = runner.invoke(app, ["models", "resolve", "gpt-4o", "--observed", "2024-09-01"]).stdout
    assert "openai/gpt-4o|date=2024-05-13" in text and "https://github.com/ogkalu2/comic-translate/issues/138" in text
    aider = runner.invoke(app, ["models", "resolve", "Qwen3 235B A22B diff, no think, Alibaba API", "--json"])
    assert json.loads(aider.stdout)["setup"] == {"edit_format": "diff"}
    bad = runner.invoke(app, ["models", "resolve", "gpt-4o", "--observed", "September"])
    assert bad.exit_code == 2 and "not a date" in bad.output
