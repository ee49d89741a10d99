"""Write the explorer: one folder of static pages over one verified snapshot.

The folder is built beside ``out_dir`` and moved into place at the end
(:func:`evalhouse.common.staging.staged_folder`), so an interrupted or failed build, a full disk
included, leaves the previous site (or nothing) and never half a site; what a killed build left
is swept by the next one. A folder is only replaced when it is an earlier evalhouse site (it
holds :data:`MARKER`).
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections import defaultdict
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from evalhouse.common import progress
from evalhouse.common.staging import staged_folder
from evalhouse.common.urls import link_target
from evalhouse.errors import InputError
from evalhouse.site.data import SiteData, load
from evalhouse.version import __version__
from evalhouse.warehouse.snapshot import open_snapshot

MARKER = ".evalhouse-site.json"
DATA_DOCS_DIR = "data-docs"


@dataclass
class SiteSummary:
    out_dir: Path
    snapshot_id: str
    pages: dict[str, int] = field(default_factory=dict)
    analyses: list[dict[str, Any]] = field(default_factory=list)
    data_docs: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "out_dir": str(self.out_dir),
            "snapshot_id": self.snapshot_id,
            "pages": self.pages,
            "analyses": self.analyses,
            "data_docs": self.data_docs,
            "index": str(self.out_dir / "index.html"),
        }


def _num(value: Any) -> str:
    """A score as a person reads it: 4 decimals (trailing zeros dropped), 4 significant digits
    for very large or very small magnitudes. The exact value is in ``data-value`` (:func:`_exact`)."""
    if value is None:
        return ""
    if not isinstance(value, float) or not math.isfinite(value):
        return str(value)
    if abs(value) >= 1e4 or 0 < abs(value) < 1e-3:
        return f"{value:.4g}"
    return f"{value:.4f}".rstrip("0").rstrip(".") or "0"


def _exact(value: Any) -> str:
    """The full value for a ``data-value`` attribute: ``repr`` of a float, so nothing is rounded."""
    if value is None:
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return repr(float(value))
    return str(value)


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("evalhouse.site", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["num"] = _num
    env.filters["exact"] = _exact
    env.filters["count_fmt"] = lambda n: f"{int(n or 0):,}"
    env.filters["link_target"] = link_target  # http(s) only: any other stored URL is shown as text
    return env


class _Writer:
    """Renders templates into the staging folder, counting pages per kind."""

    def __init__(self, staging: Path, common: dict[str, Any]) -> None:
        self.staging, self.common = staging, common
        self.env = environment()
        self.pages: dict[str, int] = defaultdict(int)

    def page(self, kind: str, rel: str, template: str, **context: Any) -> None:
        target = self.staging / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        root = "../" * rel.count("/")
        html = self.env.get_template(template).render(root=root, **self.common, **context)
        target.write_text(html, encoding="utf-8")
        self.pages[kind] += 1


def _family_links(data: SiteData) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    families: dict[str, list[str]] = defaultdict(list)
    derived: dict[str, list[str]] = defaultdict(list)
    for b in data.benchmarks:
        if b["family_id"]:
            families[b["family_id"]].append(b["benchmark_id"])
        if b["derived_from"]:
            derived[b["derived_from"]].append(b["benchmark_id"])
    return families, derived


def _write_pages(w: _Writer, data: SiteData, sections: list[Any], note: str) -> None:
    config_names = {
        base: " ".join(f"{c['config_id']} {c['name'] or ''}" for c in configs)
        for base, configs in data.configurations.items()
    }
    w.page("index", "index.html", "index.html.j2", config_names=config_names)
    with progress.task("site: model pages", total=len(data.base_models)) as step:
        for model in data.base_models:
            base = model["base_model_id"]
            w.page(
                "model",
                data.model_page(base),
                "model.html.j2",
                model=model,
                configurations=data.configurations.get(base, []),
                scores=data.scores.get(base, []),
                evidence=data.evidence.get(base, []),
            )
            step.advance()
    families, derived = _family_links(data)
    known = {b["benchmark_id"] for b in data.benchmarks}
    for bench in data.benchmarks:
        bid = bench["benchmark_id"]
        family = [f for f in families.get(bench["family_id"], []) if f != bid] if bench["family_id"] else []
        w.page(
            "benchmark",
            data.benchmark_page(bid),
            "benchmark.html.j2",
            bench=bench,
            cells=data.cells.get(bid, []),
            family=family,
            derived=derived.get(bid, []),
            known=known,
        )
    with progress.task("site: audit pages", total=len(data.by_evaluation)) as step:
        for evaluation_id, scores in data.by_evaluation.items():
            w.page("audit", data.audit_page(evaluation_id), "audit.html.j2", evaluation_id=evaluation_id, scores=scores)
            step.advance()
    validations = validation_pages(w.staging / DATA_DOCS_DIR) if w.common["data_docs"] else []
    w.page(
        "analyses", "analyses.html", "analyses.html.j2", sections=sections, analyses_note=note, validations=validations
    )
    w.page("whats-new", "whats-new.html", "whats_new.html.j2", known=known)


def _check_target(out_dir: Path) -> None:
    """Refuse an ``out_dir`` that is a file, or a non-empty folder that is not an earlier site."""
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"{out_dir} exists and is not a folder")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not (out_dir / MARKER).is_file():
        raise InputError(f"{out_dir} is not empty and is not an evalhouse site; choose a new or empty folder")


def validation_pages(docs_root: Path) -> list[dict[str, str]]:
    """The latest GX validation result page of every suite in a Data Docs folder.

    Pages are ``validations/<suite path>/<run name>/<run time>/<asset>.html``; these render without
    the network (the Data Docs index needs scripts from a CDN to draw its tables)."""
    latest: dict[str, tuple[str, str]] = {}
    root = docs_root / "validations"
    for page in sorted(root.rglob("*.html")) if root.is_dir() else []:
        parts = page.relative_to(root).parts
        if len(parts) < 4:
            continue
        suite, run_time = ".".join(parts[:-3]), parts[-2]
        if suite not in latest or run_time > latest[suite][0]:
            latest[suite] = (run_time, page.relative_to(docs_root).as_posix())
    return [{"suite": k, "run_time": t, "path": f"{DATA_DOCS_DIR}/{p}"} for k, (t, p) in sorted(latest.items())]


def _copy_static(staging: Path, data_docs: Path | None) -> str | None:
    static = staging / "static"
    static.mkdir()
    for entry in resources.files("evalhouse.site").joinpath("static").iterdir():
        if entry.is_file():
            (static / entry.name).write_bytes(entry.read_bytes())
    if data_docs is None or not (data_docs / "index.html").is_file():
        return None
    shutil.copytree(data_docs, staging / DATA_DOCS_DIR)
    return f"{DATA_DOCS_DIR}/index.html"


def build_site(
    snapshot_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    analyses: bool = True,
    data_docs: str | os.PathLike[str] | None = None,
    changes: dict[str, Any] | None = None,
) -> SiteSummary:
    """Build the explorer of the snapshot at ``snapshot_dir`` into ``out_dir``.

    The snapshot is verified first (a corrupted one is refused). ``analyses`` runs the report's
    analyses on the snapshot and puts their figures on the Analyses page (the slow part: about a
    minute on the Artificial Analysis and Epoch snapshots). ``data_docs``: a built
    great-expectations Data Docs folder (``evalhouse validate --docs``) to copy in and link.
    ``changes``: the warehouse's last run report (:func:`evalhouse.pipeline.changes.read_latest`),
    shown on the "What's new" page.
    """
    from evalhouse.site.figures import analysis_sections  # noqa: PLC0415 - matplotlib/sklearn only when asked

    out_dir = Path(out_dir).resolve()
    _check_target(out_dir)
    con = open_snapshot(snapshot_dir)
    try:
        data = load(con)
        sections = analysis_sections(con) if analyses else []
    finally:
        con.close()
    _check_target(out_dir)  # again: it may have changed while the analyses ran
    with staged_folder(out_dir, replace=True) as staging:
        docs = _copy_static(staging, Path(data_docs) if data_docs else None)
        common = {"data": data, "snapshot": data.snapshot, "summary": data.summary, "version": __version__}
        common |= {"base_models": data.base_models, "benchmarks": data.benchmarks, "sources": data.sources}
        common["data_docs"] = docs
        common["changes"] = changes
        writer = _Writer(staging, common)
        note = "The analyses were not run for this site (built with --no-analyses)."
        _write_pages(writer, data, sections, note)
        summary = SiteSummary(out_dir, data.snapshot["snapshot_id"], dict(writer.pages), data_docs=docs)
        summary.analyses = [
            {"title": s.title, "status": s.status, "figures": sum("<img" in b for b in s.blocks)} for s in sections
        ]
        (staging / MARKER).write_text(json.dumps(summary.as_dict(), indent=2) + "\n", encoding="utf-8")
    return summary
