"""Hugging Face model cards: the Hub API, the README's ``model-index`` and ``.eval_results`` files.

A repository id (``alpindale/WizardLM-2-8x22B``) is fetched as one Hub API call,
``GET /api/models/{id}?expand=cardData&expand=createdAt&...``: ``cardData`` is the README front
matter as the Hub parsed it (``model-index`` included), ``evalResults`` the repository's
``.eval_results/*.yaml`` files as the Hub validated them, and ``createdAt`` the repository's
creation date - release-date evidence of kind ``hf_repo_created``, a lower bound on the release.
A README file or URL, or one ``.eval_results`` YAML file, is read directly. Every form goes
through huggingface_hub's own card code (``RepoCard``, ``model_index_to_eval_results``,
``parse_eval_result_entries``, ``ModelInfo``); see :mod:`._card_claims` for what a value means.

One record per (model, evaluator): the Open LLM Leaderboard's numbers that a card carries are
that leaderboard's (third party, original source kept), everything else the card's own claim
(first party). A repository with no results still yields a record, so its creation date is kept
for the models other sources name.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from datetime import date, datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml
from huggingface_hub import RepoCard
from huggingface_hub.hf_api import ModelInfo

from evalhouse.common.yamls import load_yaml
from evalhouse.ingest.fetch import FetchRequest
from evalhouse.ingest.source import FetchMeta, ParseError, Recording, SourceSpec, SourceState
from evalhouse.ingest.sources import _card_claims as claims
from evalhouse.ingest.sources import _common as common
from evalhouse.schema.records import (
    ORIGINAL_SOURCE,
    ORIGINAL_SOURCE_URL,
    RELEASE_DATE,
    RELEASE_DATE_KIND,
    RELEASE_DATE_PRECISION,
    ParseFailure,
    ParseItem,
)

MAPPING_FILE = "model_cards.yaml"
_MAPPING = common.load_mapping(MAPPING_FILE)
HUB: str = _MAPPING["hub"].rstrip("/")
HUB_EPOCH = date.fromisoformat(_MAPPING["hub_epoch"])
API_EXPAND: tuple[str, ...] = tuple(_MAPPING["api_expand"])
EVALUATORS = claims.evaluators(_MAPPING["evaluators"])
GENERIC_CONFIGS = {str(c).casefold() for c in _MAPPING["generic_configs"]}
#: Other names the command line accepts for this source (``evalhouse ingest model-card ID``).
ALIASES = ("model-card",)

SOURCE = SourceSpec(
    key="model-cards",
    name="Hugging Face model cards",
    kind="model_card",
    tier=4,
    organisation="Hugging Face Hub (repository owners)",
    homepage=HUB,
    default_urls=(),
    cadence="manual",
    parser_version="model-cards/1",
    collection="model-cards",
    description=(
        "Evaluation results stated in Hugging Face model repositories: the README front matter's "
        "model-index (including the Open LLM Leaderboard bot's results, kept as that leaderboard's) "
        "and .eval_results/*.yaml, read through the Hub API with the repository's creation date."
    ),
    licence="each card's own licence (declared in its front matter); results are facts stated by the card",
    # six real Hub README cards copied byte for byte from GitHub copies of them (three from this
    # commit; the others' repositories and commits: ../shared/formats/hf-model-cards/README.md)
    verified_on=Recording(
        repository="YinanWusoymilk/hf-readme (training_and_application/readme_files/) and three other copies",
        commit="1ab39f24f8f9548593ac6304367f31ae3ff45178",
        recorded="2024-12-02",
        licence="each card's own licence (declared in its front matter)",
        files=tuple(
            f"shared:formats/hf-model-cards/{name}.README.md"
            for name in (
                "Llama-3-Instruct-8B-SPPO-Iter3",
                "WizardLM-2-8x22B",
                "calme-2.3-phi3-4b",
                "SeaLLMs-v3-7B-Chat",
                "smol_llama-220M-GQA",
                "Falcon3-10B-Instruct",
            )
        ),
    ),
)

REPO_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,95}/[A-Za-z0-9][A-Za-z0-9_.-]{0,95}$")
_REPO_URL_RE = re.compile(r"^https?://(?:www\.)?huggingface\.co/(?!api/|spaces/|datasets/)([^/?#]+/[^/?#]+)/?$")
_FILE_URL_RE = re.compile(r"/([^/]+/[^/]+)/(?:raw|resolve|blob)/[^/]+/(?:.+/)?[^/]+$")
_LOCAL_EVAL_RE = re.compile(r"/([^/]+/[^/]+)/\.eval_results/[^/]+$")
_HTML_RE = re.compile(r"^\s*(?:<!doctype html|<html|<head|<body)", re.IGNORECASE)


# --------------------------------------------------------------------------------------------
# Plan: nothing by default; repositories are named by the caller (a list, or other sources)


def plan(state: SourceState) -> list[FetchRequest]:
    """No default URLs: model cards are fetched per repository (``locate``)."""
    return []


def api_url(repo_id: str) -> str:
    query = "&".join(f"expand={e}" for e in API_EXPAND)
    return f"{HUB}/api/models/{repo_id}?{query}"


def locate(target: str, state: SourceState | None = None) -> FetchRequest | None:
    """The Hub API request for a repository id or model-page URL; None for anything else."""
    text = target.strip()
    page = _REPO_URL_RE.match(text)
    repo = page[1] if page else (text if REPO_ID_RE.match(text) else None)
    if repo is None:
        return None
    url = api_url(repo)
    conditional = state.conditional(url) if state is not None else {}
    return FetchRequest(url=url, headers={"accept": "application/json"}, label=f"api:{repo}", **conditional)


def targets_from_model_ids(model_ids: Sequence[str]) -> list[str]:
    """The model identifiers of other sources that can be Hub repository ids, deduplicated."""
    seen: dict[str, str] = {}
    for model_id in model_ids:
        text = (model_id or "").strip()
        if REPO_ID_RE.match(text):
            seen.setdefault(text.casefold(), text)
    return sorted(seen.values(), key=str.casefold)


# --------------------------------------------------------------------------------------------
# Parse


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    """Records from a Hub API response, a README, or one ``.eval_results`` YAML file."""
    text = common.decode_text(body, "the model card payload")
    head = text.lstrip()[:200]
    where = f"{meta.url} {meta.label or ''}"
    if _HTML_RE.match(head):
        raise ParseError(_html_reason(text, meta))
    if head.startswith("{"):
        yield from _parse_api(text, meta)
    elif "/.eval_results/" in where and re.search(r"\.ya?ml\b", where):
        yield from _parse_eval_file(text, meta)
    elif not head:
        raise ParseError("the model card payload is empty")
    else:
        yield from _parse_readme(text, meta)


def _html_reason(text: str, meta: FetchMeta) -> str:
    title = re.search(r"<title>(.*?)</title>", text, re.IGNORECASE | re.DOTALL)
    shown = title[1].strip()[:80] if title else text.lstrip()[:60]
    login = re.search(r"log\s*in|sign\s*in|type=[\"']?password", text, re.IGNORECASE)
    what = "a login page" if login or "login" in meta.url.lower() else "an HTML page"
    return (
        f"expected a model card, Hub API JSON or .eval_results YAML from {meta.url}, got {what} "
        f"({len(text)} characters, {shown!r}); a gated or private repository, or a redirect to sign in?"
    )


# -- Hub API ----------------------------------------------------------------------------------


def _parse_api(text: str, meta: FetchMeta) -> Iterator[ParseItem]:
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ParseError(f"the Hub API body is not valid JSON: {exc}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("id") or doc.get("modelId"), str):
        keys = sorted(doc)[:10] if isinstance(doc, dict) else type(doc).__name__
        raise ParseError(f"the Hub API body names no model id (found {keys})")
    if "error" in doc and "cardData" not in doc:
        raise ParseError(f"the Hub API answered with an error: {doc['error']!r}")
    repo_id = doc.get("id") or doc["modelId"]
    facts = {k: v for k, v in doc.items() if k not in ("cardData", "evalResults")}
    facts.setdefault("id", repo_id)
    info = ModelInfo(**facts)
    card_data = doc.get("cardData") if isinstance(doc.get("cardData"), dict) else {}
    found: list[claims.Claim | ParseFailure] = []
    if "model-index" in card_data:
        found += claims.model_index_claims(card_data["model-index"], GENERIC_CONFIGS, "cardData.model-index")
    if doc.get("evalResults"):
        found += claims.eval_results_claims(doc["evalResults"], "evalResults")
    repo = _Repo(
        repo_id=repo_id,
        card_url=f"{HUB}/{repo_id}",
        created_at=info.created_at,
        details=_repo_facts(info, card_data),
    )
    yield from _records(found, repo, meta, always=True)


def _repo_facts(info: ModelInfo, card_data: Mapping[str, Any]) -> dict[str, str]:
    facts = {
        "hf_repo_id": info.id,
        "hf_author": info.author,
        "hf_sha": info.sha,
        "hf_last_modified": info.last_modified.isoformat() if info.last_modified else None,
        "hf_created_at": info.created_at.isoformat() if info.created_at else None,
        "hf_gated": None if info.gated is None else str(info.gated).lower(),
        "hf_base_model": _joined(card_data.get("base_model")),
        "hf_license": _joined(card_data.get("license")),
    }
    return {k: v for k, v in facts.items() if v}


def _joined(value: Any) -> str | None:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or None
    return None if value is None else str(value)


# -- README -----------------------------------------------------------------------------------


def _parse_readme(text: str, meta: FetchMeta) -> Iterator[ParseItem]:
    if not re.match(r"\s*---\r?\n", text):
        first = text.lstrip().splitlines()[0][:60] if text.strip() else ""
        yield ParseFailure(
            "README.md",
            f"no YAML front matter: the card does not start with '---' (its first line is {first!r}), "
            "so it states no model-index results",
            text[:2000],
        )
        return
    try:
        card = RepoCard(text, ignore_metadata_errors=True)
    except (yaml.YAMLError, RecursionError) as exc:
        raise ParseError(f"the card's YAML front matter is not valid YAML: {' '.join(str(exc).split())}") from exc
    except ValueError as exc:
        raise ParseError(f"the card's front matter is not a mapping: {exc}") from exc
    data = card.data.to_dict()
    if "model-index" not in data:
        yield ParseFailure("README.md", "the card's front matter has no model-index: it states no results", text[:2000])
        return
    found = list(claims.model_index_claims(data["model-index"], GENERIC_CONFIGS, "model-index"))
    repo_id = _repo_from_url(meta.url) or _repo_from_sources(found)
    repo = _Repo(
        repo_id=repo_id,
        card_url=f"{HUB}/{repo_id}" if repo_id else meta.url,
        created_at=None,
        details={
            k: v for k, v in {"hf_repo_id": repo_id, "hf_base_model": _joined(data.get("base_model"))}.items() if v
        },
    )
    yield from _records(found, repo, meta, always=False)


def _repo_from_url(url: str) -> str | None:
    parts = urlsplit(url)
    if parts.scheme in ("http", "https") and "huggingface.co" in (parts.hostname or ""):
        match = _FILE_URL_RE.search(parts.path)
        if match:
            return match[1]
    return None


def _repo_from_sources(found: Sequence[claims.Claim | ParseFailure]) -> str | None:
    """The leaderboard bot names the repository only in its link: ``?query=<org>/<model>``."""
    for claim in found:
        if not isinstance(claim, claims.Claim) or not claim.source_url:
            continue
        try:
            query = parse_qs(urlsplit(claim.source_url).query).get("query", [""])[0].strip()
        except ValueError:  # not a URL urllib can split (a bracketed host that is no address)
            continue
        name = (claim.model_name or "").casefold()
        if REPO_ID_RE.match(query) and (not name or query.split("/")[1].casefold() == name):
            return query
    return None


# -- .eval_results/<name>.yaml ------------------------------------------------------------------


def _parse_eval_file(text: str, meta: FetchMeta) -> Iterator[ParseItem]:
    try:
        data = load_yaml(text)
    except (yaml.YAMLError, RecursionError) as exc:
        raise ParseError(f"the .eval_results file is not valid YAML: {' '.join(str(exc).split())}") from exc
    repo_id = _repo_from_url(meta.url) or _local_repo(meta.url)
    if repo_id is None:
        raise ParseError(
            f"cannot tell which model {meta.url} belongs to: fetch it from {HUB}/<org>/<model>/resolve/"
            "<revision>/.eval_results/<file>.yaml or keep it under <org>/<model>/.eval_results/"
        )
    found = list(claims.eval_results_claims(data, ".eval_results"))
    repo = _Repo(repo_id=repo_id, card_url=f"{HUB}/{repo_id}", created_at=None, details={"hf_repo_id": repo_id})
    yield from _records(found, repo, meta, always=False)


def _local_repo(url: str) -> str | None:
    match = _LOCAL_EVAL_RE.search(urlsplit(url).path)
    return match[1] if match else None


# -- records ---------------------------------------------------------------------------------


class _Repo:
    def __init__(self, *, repo_id: str | None, card_url: str, created_at: datetime | None, details: dict[str, str]):
        self.repo_id, self.card_url, self.created_at, self.details = repo_id, card_url, created_at, details


def _records(
    found: list[claims.Claim | ParseFailure], repo: _Repo, meta: FetchMeta, *, always: bool
) -> Iterator[ParseItem]:
    """One record per (model name, evaluator); failures pass through with their locators."""
    groups: dict[tuple[str | None, str], list[claims.Claim]] = {}
    for item in found:
        if isinstance(item, ParseFailure):
            yield item
            continue
        evaluator = claims.evaluator_of(item, EVALUATORS)
        groups.setdefault((item.model_name, evaluator.name if evaluator else claims.SELF_REPORT), []).append(item)
    if not groups and always:
        groups[(None, claims.SELF_REPORT)] = []
    for (model_name, who), members in groups.items():
        evaluator = next((e for e in EVALUATORS if e.name == who), None)
        results = []
        for claim, scaled in claims.scale_group(members, evaluator):
            if isinstance(scaled, ParseFailure):
                yield scaled
            else:
                results.append(claims.result_dict(SOURCE.key, claim, scaled, repo.card_url, evaluator))
        if members and not results:
            continue
        model_info = _model_info(model_name, repo)
        if model_info is None:
            yield ParseFailure(
                members[0].locator if members else "card", "no model named: no repository id and no model-index name"
            )
            continue
        locator = f"{repo.repo_id or model_name}:{who}"
        yield common.build_record(
            meta=meta,
            source_metadata=_source_metadata(evaluator, members, repo),
            eval_library={"name": evaluator.eval_library if evaluator else "unknown", "version": "unknown"},
            model_info=model_info,
            results=results,
            locator=locator,
            payload=common.row_payload({"repo": repo.repo_id, "group": who, "results": len(results)}),
        )


def _source_metadata(evaluator: claims.Evaluator | None, members: list[claims.Claim], repo: _Repo) -> dict[str, Any]:
    owner = (repo.repo_id or "").split("/")[0] or "unknown"
    if evaluator is not None:
        first = next((c for c in members if c.source_url), None)
        details = {
            ORIGINAL_SOURCE: evaluator.name,
            ORIGINAL_SOURCE_URL: (first.source_url if first else None) or repo.card_url,
            "evalhouse.reported_in": repo.card_url,
            "evalhouse.self_reported": "false",
        }
        evaluated_by = evaluator.evaluated_by
    else:
        named = next((c for c in members if c.source_url), None)
        details = {
            ORIGINAL_SOURCE: (named.source_name if named else None)
            or f"model card of {repo.repo_id or 'an unnamed repository'}",
            ORIGINAL_SOURCE_URL: (named.source_url if named else None) or repo.card_url,
            "evalhouse.reported_in": repo.card_url,
            "evalhouse.self_reported": "true",
        }
        evaluated_by = "model_developer"
    return common.source_metadata(
        name=SOURCE.name,
        organisation=owner,
        organisation_url=f"{HUB}/{owner}" if owner != "unknown" else HUB,
        evaluated_by=evaluated_by,
        details=details,
    )


def _model_info(model_name: str | None, repo: _Repo) -> dict[str, Any] | None:
    name = model_name or (repo.repo_id.split("/")[1] if repo.repo_id else None)
    if not name:
        return None
    details: dict[str, str] = {"deployment_type": "unknown", "model_availability": "unknown", **repo.details}
    details.update(_created_evidence(repo.created_at))
    return {"name": name, "id": repo.repo_id or name, "additional_details": details}


def _created_evidence(created_at: datetime | None) -> dict[str, str]:
    """``hf_repo_created`` release-date evidence, or a note why the creation date gives none."""
    if created_at is None:
        return {}
    day = created_at.date()
    if day <= HUB_EPOCH:
        return {
            "evalhouse.hf_created_at_note": (
                f"createdAt {day.isoformat()} is not after the Hub's {HUB_EPOCH.isoformat()} epoch: the repository "
                "predates the Hub's creation-date records, so it gives no release-date evidence"
            )
        }
    return {RELEASE_DATE: day.isoformat(), RELEASE_DATE_PRECISION: "day", RELEASE_DATE_KIND: "hf_repo_created"}
