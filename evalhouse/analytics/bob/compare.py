"""A task described in words ranks the Artificial Analysis configurations (paper 004 §3.3, BoB-Support).

:func:`compare_models` returns a :class:`TaskComparisonRun`: the JSON payload, the analysis record
(with the encoder's identity in its parameters, so a printed ranking can be traced to the vectors
that made it), the result rows, the texts used and the vectors embedded on the way, which
:mod:`evalhouse.analytics.runs` writes into the warehouse.

Population of ``compare``: the configurations the ``artificial-analysis`` source loaded (the
leaderboard snapshot the method was designed on), the AA benchmark columns with at least fifteen
observed configurations (paper App. A's column screen; all fourteen in the 2026-07-06 snapshot),
and the configurations with at least five of those observed (the paper's row screen). All
fourteen rather than the nine the paper also used: a task query should see every capability the
leaderboard measures (APEX-Agents and GDPval for agentic work, for instance), and on the
2026-07-06 snapshot BoB's leave-one-benchmark-out profile stays above θ alone and the uniform mean
on the fourteen as on the nine (``reproduce paper-004`` prints both sets). ``benchmarks="paper"``
restricts to the paper's nine.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from evalhouse.analytics.base import AnalysisRecord, Timer, make_record
from evalhouse.analytics.bob.encoders import EmbeddingCache, Encoder, embed_benchmarks, make_encoder
from evalhouse.analytics.bob.estimator import fit_bob
from evalhouse.analytics.bob.lobo import eligible_rows
from evalhouse.analytics.bob.texts import QUERY_PREFIX, TextStore, load_text_store
from evalhouse.analytics.data.aa import AA_SOURCE, aa_frames
from evalhouse.analytics.equate.curves import curve_rows, theta_rows
from evalhouse.common.jsonable import to_jsonable
from evalhouse.common.resources import read_sql
from evalhouse.errors import DataMissing, InputError

MIN_ROW_BENCHMARKS = 5  # paper App. A: a configuration needs five observed benchmarks
MIN_COLUMN_SETTINGS = 15  # paper App. A: a column needs >= 15 settings
REGISTER_PREFIXES = ("this task measures", "this benchmark measures")


# ---------------------------------------------------------------------- texts and vectors
def registry_texts(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, str]]:
    """``benchmark_id -> {description, paraphrase}`` from the warehouse ``benchmark`` table.

    The table is the curation registry as loaded (a snapshot carries it), so a run on a snapshot
    sees the texts of that snapshot, not of the installed package.
    """
    rows = con.execute(read_sql("evalhouse.analytics", "benchmark_texts.sql")).fetchall()
    out: dict[str, dict[str, str]] = {}
    for bid, description, paraphrase in rows:
        texts = {k: v for k, v in (("description", description), ("paraphrase", paraphrase)) if v and v.strip()}
        if texts:
            out[str(bid)] = texts
    return out


def warehouse_text_store(con: duckdb.DuckDBPyConnection) -> TextStore:
    """The frozen text store merged with the registry texts (frozen texts win on a clash)."""
    return load_text_store(extra=registry_texts(con), extra_origin="registry")


def canonical_query(task: str, store: TextStore, *, as_is: bool = False) -> tuple[str, str]:
    """The text to embed for a task and how it was obtained.

    Paper 004 §L.5 rewrites a query into the descriptions' register ("This task measures …")
    before embedding. Here: a stored query name (``software_engineering_agent``, see
    ``evalhouse/analytics/data/benchmark_texts.yaml``) gives its §L.6 canonical form; text already
    in the register, or ``as_is``, is embedded as given; anything else is put in the register by
    the template ``This task measures <task>.`` (no language model is involved).
    """
    if not isinstance(task, str) or not task.strip():
        raise InputError(
            "empty task: describe the task in words, e.g. --task 'agentic software engineering in a terminal'"
        )
    text = " ".join(task.split())
    key = text[len(QUERY_PREFIX) :] if text.startswith(QUERY_PREFIX) else text
    stored = store.queries()
    if key in stored:
        return stored[key], f"stored canonical form of query '{key}' (paper 004 §L.6)"
    if as_is or text.lower().startswith(REGISTER_PREFIXES):
        return text, "as given"
    body = text[0].lower() + text[1:] if len(text) > 1 and not text[:2].isupper() else text
    body = body.rstrip(" .")
    return f"This task measures {body}.", "template 'This task measures <task>.' (paper 004 §L.5 register)"


# ---------------------------------------------------------------------- AA population
def usable_benchmarks(wide: pd.DataFrame, min_settings: int = MIN_COLUMN_SETTINGS) -> list[str]:
    """Columns with at least ``min_settings`` observed configurations (paper 004 App. A's column screen)."""
    counts = wide.notna().sum()
    return [str(c) for c in wide.columns if counts[c] >= min_settings]


def select_benchmarks(wide: pd.DataFrame, benchmarks: str | Sequence[str] = "all") -> list[str]:
    """``"all"``: every column with >= 15 settings; a sequence: those of its benchmarks that pass."""
    usable = usable_benchmarks(wide)
    if isinstance(benchmarks, str):
        if benchmarks != "all":
            raise InputError(f"benchmarks={benchmarks!r}: pass 'all' or a list of benchmark ids")
        return usable
    unknown = [b for b in benchmarks if b not in wide.columns]
    if unknown:
        raise InputError(f"benchmarks not in the data: {unknown}")
    return [b for b in benchmarks if b in usable]


def aa_population(
    con: duckdb.DuckDBPyConnection, benchmarks: str | Sequence[str] = "all"
) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """``(wide, meta, used)``: the AA configurations and benchmark columns ``compare`` ranks on.

    Raises :class:`~evalhouse.errors.DataMissing` when the warehouse holds no ``artificial-analysis`` rows.
    """
    full, meta = aa_frames(con)
    used = select_benchmarks(full, benchmarks)
    if len(used) < 2:
        raise DataMissing(f"fewer than two AA benchmarks have >= {MIN_COLUMN_SETTINGS} observed configurations: {used}")
    wide = eligible_rows(full[used], min(MIN_ROW_BENCHMARKS, len(used)))
    wide.attrs = dict(full.attrs)
    return wide, meta, used


# ---------------------------------------------------------------------- compare
@dataclass
class TaskComparisonRun:
    """One ``compare --task`` fit: what to print and what to record."""

    payload: dict[str, Any]
    record: AnalysisRecord
    results: dict[str, list[dict[str, Any]]]
    texts: TextStore
    cache: EmbeddingCache
    extra: dict[str, Any] = field(default_factory=dict)


def _ranking_rows(frame: pd.DataFrame, names: pd.Series, top: int) -> list[dict[str, Any]]:
    return [
        {
            "model": str(model),
            "name": str(names.get(model, model)),
            "task_score": round(float(r["task_score"]), 6),
            "theta": round(float(r["theta"]), 6),
            "support": round(float(r["support"]), 6),
            "rank_task": int(r["rank_task"]),
            "rank_theta": int(r["rank_theta"]),
        }
        for model, r in frame.head(top).iterrows()
    ]


def compare_models(  # noqa: PLR0913 - keyword-only settings of one analysis
    con: duckdb.DuckDBPyConnection,
    task: str,
    *,
    top: int = 10,
    encoder: str | Encoder = "wordllama",
    benchmarks: str | Sequence[str] = "all",
    as_is: bool = False,
    min_observed: int = 4,
    bandwidth: float = 0.45,
    shrinkage: str = "support",
    information: str = "mean",
    explain: str | None = None,
) -> TaskComparisonRun:
    """Rank the AA configurations for a task described in words (paper 004 §3.3, BoB-Support).

    ``con`` is a warehouse or an opened snapshot, read only: vectors it lacks are embedded and
    kept in the returned cache for the recording step. ``task`` is a description or a stored
    query name (:func:`canonical_query`); ``benchmarks`` ``"all"`` or a list (module docstring).

    The payload: ``task``, ``query`` (embedded text) and ``query_form``, ``population``,
    ``encoder``, ``nearest_benchmarks``, ``ranking``, ``movers`` (rows: model, name, task_score,
    theta, support, rank_task, rank_theta), ``median_support``, ``far_from_all`` (the task's
    nearest benchmark is farther from it than any benchmark is from its own nearest neighbour: no
    benchmark is specifically about the task, so the adjustment to θ rests on loosely related
    benchmarks). With ``explain`` (a model id, or a name or unique part of one): ``explain`` holds
    what puts that model where it is (:func:`explain_model`).
    """
    if top < 1:
        raise InputError(f"top must be >= 1, got {top}")
    store = warehouse_text_store(con)
    query, form = canonical_query(task, store, as_is=as_is)  # empty task fails before any work
    timer = Timer()
    wide, meta, used = aa_population(con, benchmarks)
    enc = make_encoder(encoder, store)
    cache = EmbeddingCache(con, enc, read_only=True)
    emb = embed_benchmarks(store, used, enc, cache=cache)
    eq, bob = fit_bob(
        wide,
        emb,
        equating_params={"min_observed": min_observed},
        bandwidth=bandwidth,
        shrinkage=shrinkage,
        information=information,
    )
    qvec = cache.encode([query])[0]
    if not np.linalg.norm(qvec) > 0:
        raise InputError(f"the {enc.name} encoder maps the task to the zero vector (no word it knows); rephrase it")
    result = bob.predict(qvec, top=top)
    names = meta["name"].astype(str)
    nearest = [
        {
            "benchmark": str(r["benchmark"]),
            "distance": round(float(r["distance"]), 6),
            "relevance": round(float(r["relevance"]), 6),
            "u": round(float(r["u"]), 6),
        }
        for _, r in result.nearest.iterrows()
    ]
    D = bob.distances_.to_numpy().copy()
    np.fill_diagonal(D, np.inf)
    max_nn = float(D.min(axis=1).max())  # the most isolated benchmark's distance to its nearest neighbour
    payload: dict[str, Any] = {
        "task": task,
        "query": query,
        "query_form": form,
        "population": {
            "source": AA_SOURCE,
            "benchmarks": used,
            "n_configurations": len(wide),
            "n_fitted": len(eq.models_),
            "rule": (
                f"AA configurations with >= {MIN_ROW_BENCHMARKS} of the {len(used)} benchmarks observed; "
                f"benchmarks with >= {MIN_COLUMN_SETTINGS} observed configurations"
            ),
        },
        "encoder": enc.identity,
        "bandwidth_multiple": bandwidth,
        "h": round(float(result.h), 6),
        "shrinkage": shrinkage,
        "median_support": round(float(result.table["support"].median()), 6),
        "median_beta": round(float(result.table["beta"].median()), 6),
        "nearest_benchmarks": nearest,
        "median_distance": round(float(bob.median_distance_), 6),
        "max_neighbour_distance": round(max_nn, 6),
        "far_from_all": bool(nearest[0]["distance"] > max_nn),
        "ranking": _ranking_rows(result.table, names, top),
        "movers": _ranking_rows(result.movers, names, top),
        "information": information,
        "normalisation": eq.normalisation_,
        "snapshot_id": wide.attrs.get("snapshot_id"),
    }
    if explain is not None:
        payload["explain"] = explain_model(bob, qvec, resolve_model(explain, list(eq.models_), names), names)
    record = make_record(
        kind="task_comparison",
        estimator="evalhouse.analytics.bob.estimator.BalanceOfBenchmarks",
        params={
            **bob.get_params(),
            "min_observed": min_observed,
            "benchmarks": used,
            "encoder": enc.identity,
            "query": query,
            "query_sha256": hashlib.sha256(query.encode()).hexdigest(),
        },
        inputs=[wide, emb],
        timer=timer,
        diagnostics={
            "encoder": enc.identity,
            "query_form": form,
            "bob": bob.record_.diagnostics,
            "equating": eq.record_.diagnostics,
            "median_support": payload["median_support"],
            "nearest_benchmarks": nearest[:5],
        },
    )
    quantities = [
        {
            "name": f"task_score:{model}",
            "ours": float(r["task_score"]),
            "note": (
                f"theta {r['theta']:.4f}; support {r['support']:.4f}; "
                f"rank {int(r['rank_theta'])} -> {int(r['rank_task'])}"
            ),
        }
        for model, r in result.table.iterrows()
    ]
    results = {"theta": theta_rows(eq), "curve": curve_rows(eq), "quantity": quantities}
    return TaskComparisonRun(payload, record, results, _used_texts(store, used), cache)


def resolve_model(wanted: str, models: Sequence[str], names: pd.Series) -> str:
    """The fitted model ``wanted`` names: its id, its display name (any case), or a unique part of either."""
    text = " ".join(str(wanted).split()).lower()
    if not text:
        raise InputError("--explain needs a model id or name")
    label = {m: str(names.get(m, m)) for m in models}
    for test in (lambda m: m.lower() == text, lambda m: label[m].lower() == text):
        exact = [m for m in models if test(m)]
        if len(exact) == 1:
            return exact[0]
    found = [m for m in models if text in m.lower() or text in label[m].lower()]
    if len(found) == 1:
        return found[0]
    if not found:
        raise InputError(f"no ranked configuration matches {wanted!r} (models with too few benchmarks are not ranked)")
    listed = "; ".join(f"{m} ({label[m]})" for m in found[:12])
    more = f" and {len(found) - 12} more" if len(found) > 12 else ""
    raise InputError(f"{wanted!r} matches {len(found)} configurations, name one: {listed}{more}")


def explain_model(bob: Any, qvec: np.ndarray, model: str, names: pd.Series) -> dict[str, Any]:
    """Summary, per-benchmark rows and sibling configurations of one model for ``--explain``.

    Siblings are the configurations whose display name shares the part before " (" (e.g. the
    reasoning efforts of one model), with their ranks under the same query.
    """
    summary, rows = bob.explain(qvec, model)
    summary["name"] = str(names.get(model, model))
    table = bob.predict(qvec, top=1).table
    stem = summary["name"].split(" (")[0].strip().lower()
    siblings = [
        {
            "model": str(m),
            "name": str(names.get(m, m)),
            "task_score": round(float(r["task_score"]), 6),
            "theta": round(float(r["theta"]), 6),
            "rank_task": int(r["rank_task"]),
            "rank_theta": int(r["rank_theta"]),
        }
        for m, r in table.iterrows()
        if str(names.get(m, m)).split(" (")[0].strip().lower() == stem
    ]
    records = to_jsonable(rows.reset_index(names="benchmark").to_dict("records"))
    return {
        "summary": summary,
        "benchmarks": records,
        "siblings": siblings,
        "reading": "task score = theta + sum of contributions; contribution = beta x share x z, share = "
        "g x w x I / sum(g x w x I) over the model's observed benchmarks (g relevance to the task, w robust "
        "weight, I information weight)",
    }


def _used_texts(store: TextStore, used: Sequence[str]) -> TextStore:
    keep = {k: t for k, t in store.texts.items() if k[0] in set(used)}
    return TextStore(texts=keep, names=dict(store.names))
