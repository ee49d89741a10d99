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
from evalhouse.site import present
from evalhouse.site.data import Board, SiteData, load
from evalhouse.version import __version__
from evalhouse.warehouse.audit.score import LOCATORS, POLICY_RULES
from evalhouse.warehouse.snapshot.reader import open_snapshot

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


#: What ``getattr`` finds on a plain dict: its methods and dunders. Any other name is a key.
_DICT_ATTRIBUTES = frozenset(dir(dict))


class _RowEnvironment(jinja2.Environment):
    """Jinja's environment, with ``row.name`` on a plain dict row read as a key first.

    Jinja tries the attribute, and for a dict row that raises an AttributeError before the key is
    read: a tenth of a site's rendering went to those exceptions. A name that is not one of a
    dict's own attributes can only be a key, so it is looked up as one, and the result is the
    same as Jinja's own lookup, missing keys included."""

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return super().getattr(obj, attribute)


def environment() -> jinja2.Environment:
    env = _RowEnvironment(
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
    env.filters["qualifiers"] = present.qualifiers
    env.globals.update(
        setup_parts=present.setup_parts,
        setup_text=present.setup_text,
        interval_of=present.interval,
        step_text=present.step_text,
        search_text=present.search_text,
        policy_rules=POLICY_RULES,
    )
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


def _model_rows(data: SiteData) -> list[dict[str, Any]]:
    """The index's rows (families grouped, :func:`present.index_rows`) with what search reads:
    ``search`` (every name and configuration, as words) and ``names`` (the names an exact search
    matches: the id, the id without its developer, the name)."""
    rows = present.index_rows(data.base_models)
    for row in rows:
        base = row["base_model_id"]
        configs = data.configurations.get(base, [])
        row["search"] = present.search_text(
            base,
            row["name"],
            row["developer_id"],
            row["family_id"],
            *(f"{c['config_id']} {c['name'] or ''}" for c in configs),
        )
        names = {
            present.search_text(base),
            present.search_text(base.split("/", 1)[-1]),
            present.search_text(row["name"]),
        }
        row["names"] = "|".join(sorted(n for n in names if n))
    return rows


def _leaders(data: SiteData) -> dict[str, dict[str, Any]]:
    return {bid: boards[0].cells[0] for bid, boards in data.boards.items() if boards[0].main and boards[0].cells}


def _board_title(board: Board) -> str:
    if board.subset:
        return board.subset
    setup = present.setup_text(board.setup, board.setup_key)
    return " ".join(p for p in (board.metric_params_key, setup) if p) or "whole benchmark"


def _benchmark_pages(w: _Writer, data: SiteData) -> None:
    """A page per benchmark (its main board, or the list of its boards when it has none) and one
    per other board (a subset, another setup)."""
    families, derived = _family_links(data)
    known = {b["benchmark_id"] for b in data.benchmarks}
    for bench in data.benchmarks:
        bid = bench["benchmark_id"]
        family = [f for f in families.get(bench["family_id"], []) if f != bid] if bench["family_id"] else []
        boards = data.boards.get(bid, [])
        main = boards[0] if boards and boards[0].main else None
        pages = [("benchmark", data.benchmark_page(bid), main)]
        pages += [("board", data.board_page(b), b) for b in boards if b is not main]
        for kind, rel, board in pages:
            policy = board.cells[0]["policy"] if board is not None and board.cells else None
            w.page(
                kind,
                rel,
                "benchmark.html.j2",
                bench=bench,
                board=board,
                board_title=_board_title(board) if board is not None else "",
                others=[b for b in boards if b is not board],
                chart=present.chart(board.cells) if board is not None else None,
                policy_rule=POLICY_RULES.get(policy, policy or ""),
                family=family,
                derived=derived.get(bid, []),
                known=known,
            )


def _decisions_of(data: SiteData) -> Any:
    def decisions_of(score: dict[str, Any]) -> list[dict[str, Any]]:
        keys = (
            ("score", str(score["score_id"])),
            ("cell", score["cell_id"]),
            ("benchmark", score["benchmark_id"]),
            ("metric", score["metric_id"]),
        )
        found = [d for key in keys for d in data.decisions.get(key, [])]
        return sorted(found, key=lambda d: (d["created_at"], d["decision_id"]))

    return decisions_of


def _write_pages(w: _Writer, data: SiteData, sections: list[Any], note: str) -> None:
    w.page(
        "index",
        "index.html",
        "index.html.j2",
        model_rows=_model_rows(data),
        families=sorted({m["family_id"] for m in data.base_models if m["family_id"]}),
        developers=sorted({m["developer_id"] for m in data.base_models if m["developer_id"]}),
        leaders=_leaders(data),
    )
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
    _benchmark_pages(w, data)
    decisions_of = _decisions_of(data)
    with progress.task("site: audit pages", total=len(data.by_evaluation)) as step:
        for evaluation_id, scores in data.by_evaluation.items():
            first = scores[0]
            w.page(
                "audit",
                data.audit_page(evaluation_id),
                "audit.html.j2",
                evaluation_id=evaluation_id,
                scores=scores,
                decisions_of=decisions_of,
                record_decisions=data.decisions.get(("fingerprint", first["evaluation_fingerprint"]), []),
                locators_note=LOCATORS,
                evidence=data.evidence.get(first["base_model_id"], []),
            )
            step.advance()
    validations = validation_pages(w.staging / DATA_DOCS_DIR) if w.common["data_docs"] else []
    w.page(
        "analyses", "analyses.html", "analyses.html.j2", sections=sections, analyses_note=note, validations=validations
    )
    known = {b["benchmark_id"] for b in data.benchmarks}
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


def build_site(  # noqa: PLR0913 - the options after the two folders are keyword-only
    snapshot_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    analyses: bool = True,
    data_docs: str | os.PathLike[str] | None = None,
    changes: dict[str, Any] | None = None,
    record_into: str | os.PathLike[str] | None = None,
) -> SiteSummary:
    """Build the explorer of the snapshot at ``snapshot_dir`` into ``out_dir``.

    The snapshot is verified first (a corrupted one is refused). ``analyses`` puts the report's
    sections on the Analyses page: those recorded for this snapshot in the warehouse
    ``record_into`` as recorded, the others fitted now (the slow part: minutes on the Artificial
    Analysis and Epoch data) and recorded there when it exists. ``data_docs``: a built
    great-expectations Data Docs folder (``evalhouse validate --docs``) to copy in and link.
    ``changes``: the warehouse's last run report (:func:`evalhouse.pipeline.changes.read_latest`),
    shown on the "What's new" page.
    """
    out_dir = Path(out_dir).resolve()
    _check_target(out_dir)
    con = open_snapshot(snapshot_dir)
    try:
        data = load(con)
        sections: list[Any] = []
        if analyses:
            # matplotlib, scipy and sklearn (seconds to import) only when the analyses are asked for
            from evalhouse.site.figures import analysis_sections  # noqa: PLC0415

            sections = analysis_sections(con, Path(record_into) if record_into else None)
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
            {
                "title": s.title,
                "status": s.status,
                "figures": sum("<img" in b for b in s.blocks),
                "reused": s.reused_from is not None,
            }
            for s in sections
        ]
        (staging / MARKER).write_text(json.dumps(summary.as_dict(), indent=2) + "\n", encoding="utf-8")
    return summary
