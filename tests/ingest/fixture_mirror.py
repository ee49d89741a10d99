"""The replay mirror of every leaderboard source: authored fixtures + the real ../shared payloads.

``build(out, shared)`` writes one mirror tree (laid out by :mod:`evalhouse.ingest.mirror`) that
``evalhouse refresh --mirror`` replays through a local HTTP server. Real payloads are read from
``../shared`` at build time (never copied into the repository): the Swallow site, the LEXam
page, the Vals.ai payload (encoded back into the Astro ``BenchmarkView`` island its page
carries), the Mercor export envelopes and the Vectara results files (with the tree listing the
HF API would return for them). Sources without a shared sample use the authored fixtures in
``tests/fixtures/<source>/`` (see each folder's README).
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from evalhouse.ingest.mirror import build_mirror
from evalhouse.ingest.recordings import Roots, replay_payloads
from evalhouse.ingest.sources import (
    aider_polyglot,
    helm,
    lexam,
    livebench,
    llm_stats,
    lmarena,
    mercor_eval,
    open_llm_leaderboard,
    swallow_leaderboard,
    terminal_bench,
    vals_ai,
    vectara_hallucination_leaderboard,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SWALLOW = "formats/swallow-leaderboard/site"
LEXAM = "formats/lexam/leaderboard.html"
VALS = "formats/vals_ai/finance_agent_payload.json"
MERCOR = "formats/mercor_eval/api_payload.json"
VECTARA = "formats/vectara_hallucination_leaderboard/source_rows.json"
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


def vectara_tree(files: dict[str, Any]) -> bytes:
    entries = [{"type": "directory", "path": p.split("/")[0]} for p in sorted(files)]
    entries += [{"type": "file", "path": p, "size": len(json.dumps(v))} for p, v in sorted(files.items())]
    return json.dumps(entries).encode()


def payloads(shared: Path) -> dict[str, bytes]:
    """``{live URL: bytes}`` for every catalogued leaderboard source."""
    f = FIXTURES
    out: dict[str, bytes] = {}
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
    vectara = json.loads((shared / VECTARA).read_text())
    tree = vectara_hallucination_leaderboard.TREE
    out[f"{tree}?recursive=true&limit=1000"] = vectara_tree(vectara)
    for path, doc in vectara.items():
        out[vectara_hallucination_leaderboard.FILES + path] = json.dumps(doc).encode()
    out[open_llm_leaderboard.URL] = (f / "open-llm-leaderboard/formatted.json").read_bytes()
    out[helm.METADATA_URL] = (f / "helm/project_metadata.json").read_bytes()
    for project in json.loads(out[helm.METADATA_URL]):
        if project["id"] not in helm.LEADERBOARDS:
            continue
        base = f"{helm.STORAGE}/{project['id']}/benchmark_output/releases/{project['releases'][0]}"
        out[f"{base}/groups.json"] = (f / f"helm/{project['id']}_groups.json").read_bytes()
        out[f"{base}/groups/core_scenarios.json"] = (f / f"helm/{project['id']}_core_scenarios.json").read_bytes()
    out[lmarena.URL] = (f / "lmarena/leaderboard_table_text.csv").read_bytes()
    for release in livebench.RELEASES:
        for name in (f"table_{release}.csv", f"categories_{release}.json"):
            out[livebench.BASE + name] = (f / "livebench" / name).read_bytes()
    for version in terminal_bench.VERSIONS:
        url = f"{terminal_bench.ENDPOINT}?leaderboard=terminal-bench&version={version}"
        out[url] = (f / f"terminal-bench/leaderboard-read_{version}.json").read_bytes()
    out[aider_polyglot.URL] = (f / "aider-polyglot/polyglot_leaderboard.yml").read_bytes()
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


def build(out: Path, shared: Path) -> dict[str, Path]:
    """Write the mirror under ``out``; returns ``{live URL: file}``."""
    return build_mirror(out, payloads(shared))
