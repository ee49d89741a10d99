"""The replay mirror of every leaderboard source: recorded real payloads + the real ../shared ones.

``build(out, shared)`` writes one mirror tree (laid out by :mod:`evalhouse.ingest.mirror`) that
``evalhouse refresh --mirror`` replays through a local HTTP server. Real payloads are read from
``../shared`` at build time (never copied into the repository): the Swallow site, the LEXam
page, the Vals.ai payload (encoded back into the Astro ``BenchmarkView`` island its page
carries) and the Mercor export envelopes. The sources verified on recorded payloads (``RECORDED``) replay
exactly the files their ``verified_on`` names (Terminal-Bench's recorded answer under its URL and
POST body); the others use the fixtures in ``tests/fixtures/<source>/`` (see each folder's README).
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from recorded import replayed

from evalhouse.ingest.mirror import MirrorKey, build_mirror
from evalhouse.ingest.recordings import Roots, replay_payloads
from evalhouse.ingest.sources import (
    lexam,
    llm_stats,
    mercor_eval,
    swallow_leaderboard,
    vals_ai,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SWALLOW = "formats/swallow-leaderboard/site"
LEXAM = "formats/lexam/leaderboard.html"
VALS = "formats/vals_ai/finance_agent_payload.json"
MERCOR = "formats/mercor_eval/api_payload.json"
#: Sources whose mirror files are their recorded real payloads (``SourceSpec.verified_on``).
RECORDED = (
    "open-llm-leaderboard",
    "helm",
    "lmarena",
    "livebench",
    "aider-polyglot",
    "vectara-hallucination-leaderboard",
)
#: Keys for sources whose API needs one (a mirror never receives them).
ENV = {mercor_eval.KEY_ENV: "test-mercor-key", llm_stats.KEY_ENV: "test-llm-stats-key"}


def encode_astro(value: Any) -> Any:
    """Astro's island serialisation (the inverse of ``vals_ai.decode_astro``)."""
    if isinstance(value, list):
        return [1, [encode_astro(v) for v in value]]
    if isinstance(value, dict):
        return [0, {k: encode_astro(v) for k, v in value.items()}]
    return [0, value]


def vals_page(view: dict[str, Any]) -> bytes:
    props = html.escape(json.dumps({"benchmarkView": encode_astro(view)}), quote=True)
    return (
        "<!DOCTYPE html><html><head><title>Vals AI</title></head><body><main>"
        f'<astro-island uid="Z1" component-url="/_astro/BenchmarkView.Cx1.js" props="{props}" ssr client="load">'
        "</astro-island></main></body></html>"
    ).encode()


def payloads(shared: Path) -> dict[MirrorKey, bytes]:
    """``{live URL (or (URL, POST body)): bytes}`` for every catalogued leaderboard source."""
    f = FIXTURES
    out: dict[MirrorKey, bytes] = {}
    for key in RECORDED:
        out.update(replayed(key, shared))
    for page in sorted((shared / SWALLOW).iterdir()):
        out[swallow_leaderboard.SITE + page.name] = page.read_bytes()
    out[lexam.URL] = (shared / LEXAM).read_bytes()
    vals = json.loads((shared / VALS).read_text())
    out[vals_ai.INDEX] = (f / "vals-ai/benchmarks.html").read_bytes()
    for view in vals["benchmarks"]:
        out[view["source_url"]] = vals_page(view)
    mercor = json.loads((shared / MERCOR).read_text())
    out[f"{mercor_eval.BASE}/benchmarks"] = json.dumps(mercor["benchmarks"]).encode()
    out[f"{mercor_eval.BASE}/leaderboards?limit=500&offset=0"] = json.dumps(mercor["leaderboards"]).encode()
    for name, path in llm_stats.ENDPOINTS.items():
        out[llm_stats.BASE + path] = (f / f"llm-stats/{name}.json").read_bytes()
    page2 = f / "llm-stats/scores_page2.json"
    out[llm_stats.scores_page_url(json.loads((f / "llm-stats/scores.json").read_text())["next_cursor"])] = (
        page2.read_bytes()
    )
    # every other verified source: its recorded replay files at their live URLs (never overriding the above)
    for url, body in replay_payloads(Roots(shared=shared)).payloads.items():
        out.setdefault(url, body)
    return out


def build(out: Path, shared: Path) -> dict[MirrorKey, Path]:
    """Write the mirror under ``out``; returns ``{live URL: file}``."""
    return build_mirror(out, payloads(shared))
