"""A stand-in Hugging Face Hub for tests: API responses for the shared cards, served over loopback.

``hub_payloads(shared)`` builds ``{api URL: bytes}`` for the six shared model cards the way the
Hub answers ``GET /api/models/{id}?expand=...``: ``cardData`` is the card's YAML front matter
(read from ../shared at test time), the repository facts come from the authored
``fixtures/model-cards/hub_api_facts.json``. ``serve_hub`` writes them as a mirror tree and serves
it with the real HTTP server, so the source is fetched through the normal client.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from httpserver import ScriptedServer, serve

from evalhouse.ingest.http import HttpClient
from evalhouse.ingest.mirror import build_mirror
from evalhouse.ingest.sources import model_cards

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "model-cards"
CARDS_DIR = ("formats", "hf-model-cards")
FAST = {"backoff_base": 0.001, "backoff_max": 0.01, "timeout": 2.0, "max_retries": 0, "trust_env": False}
#: results per card's model-index (shared/formats/hf-model-cards/README.md)
EXPECTED_RESULTS = {
    "UCLA-AGI/Llama-3-Instruct-8B-SPPO-Iter3": 6,
    "tiiuae/Falcon3-10B-Instruct": 6,
    "alpindale/WizardLM-2-8x22B": 6,
    "SeaLLMs/SeaLLMs-v3-7B-Chat": 6,
    "BEE-spoke-data/smol_llama-220M-GQA": 12,
    "MaziyarPanahi/calme-2.3-phi3-4b": 12,
}


def facts() -> dict[str, dict[str, str]]:
    return json.loads((FIXTURES / "hub_api_facts.json").read_text("utf-8"))["repos"]


def front_matter(text: str) -> dict[str, Any]:
    """The card's metadata as the Hub holds it: the YAML between the ``---`` lines. The Falcon3
    copy is a bare metadata export (first line ``metadata``, no delimiters); the Hub's own card
    has proper front matter, so its YAML is the rest of the file."""
    lines = text.replace("\r\n", "\n").split("\n")
    if lines[0].strip() == "---":
        end = lines.index("---", 1)
        return yaml.safe_load("\n".join(lines[1:end]))
    return yaml.safe_load("\n".join(lines[1:]))


def api_body(repo: str, fact: Mapping[str, str], card_data: Mapping[str, Any] | None, **extra: Any) -> bytes:
    doc: dict[str, Any] = {
        "_id": fact["sha"][:24],
        "id": repo,
        "author": repo.split("/", maxsplit=1)[0],
        "sha": fact["sha"],
        "createdAt": fact["createdAt"],
        "lastModified": fact["lastModified"],
        "private": False,
        "gated": False,
    }
    if card_data is not None:
        doc["cardData"] = dict(card_data)
    doc.update(extra)
    return json.dumps(doc).encode("utf-8")


def hub_payloads(shared: Path) -> dict[str, bytes]:
    out = {}
    for repo, fact in facts().items():
        text = shared.joinpath(*CARDS_DIR, fact["card"]).read_text("utf-8")
        out[model_cards.api_url(repo)] = api_body(repo, fact, front_matter(text))
    return out


@contextmanager
def serve_hub(
    tmp: Path, payloads: Mapping[str, bytes], routes: Mapping[str, Any] | None = None
) -> Iterator[ScriptedServer]:
    """The payloads as a mirror tree under ``tmp/m``, served on 127.0.0.1 (``mirror_url(srv)``)."""
    build_mirror(tmp / "m", payloads)
    with serve(routes, static_dir=tmp) as srv:
        yield srv


def mirror_url(srv: ScriptedServer) -> str:
    return f"{srv.url}/m"


def client_for(srv: ScriptedServer):
    """A client factory replaying the local Hub (for ``ingest_file`` / ``RunOptions``)."""
    return lambda _mirror: HttpClient(mirror=mirror_url(srv), **FAST)
