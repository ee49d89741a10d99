"""Warehouse-level entry points of paper 004 (Balance of Benchmarks) for the CLI and the report.

* :func:`compare_models` — ``evalhouse compare --task``: a task described in words ranks the
  Artificial Analysis configurations (BoB-Support on density-weighted characteristic curves).
* :func:`reproduce_paper004_frames` — ``evalhouse reproduce paper-004``: the paper's
  leave-one-benchmark-out comparison on the AA frames a warehouse holds, as plain JSON.
* :func:`equate_csv` — ``evalhouse analyze equate``: a long CSV equated on one scale.

Every fit that a writable warehouse receives is recorded (``analysis_run`` plus
``analysis_theta`` / ``analysis_curve`` / ``analysis_quantity``) with the encoder's identity in
its parameters and diagnostics, so a printed ranking can be traced to the vectors that made it.

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
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from evalhouse.analytics.base import AnalysisRecord, input_sha256
from evalhouse.analytics.embed import EmbeddingCache, Encoder, embed_benchmarks, make_encoder
from evalhouse.analytics.equate import CharacteristicCurveEquating, equate_long_csv
from evalhouse.analytics.evaluate_bob import BOB, eligible_rows
from evalhouse.analytics.texts import QUERY_PREFIX, TextStore, load_text_store, store_texts

AA_SOURCE = "artificial-analysis"
BENCHMARK_SETS: tuple[str, ...] = ("all", "paper")
MIN_ROW_BENCHMARKS = 5  # paper App. A: a configuration needs five observed benchmarks
REGISTER_PREFIXES = ("this task measures", "this benchmark measures")
INGEST_AA_HINT = (
    "ingest the Artificial Analysis snapshot first: 'evalhouse ingest artificial-analysis "
    "../shared/datasets/artificial-analysis-2026-07-06/aa_models_raw_parsed.csv' "
    "(or 'evalhouse refresh --source artificial-analysis')"
)


class AnalysisDataMissing(LookupError):
    """The warehouse does not hold the data an analysis needs; the message says how to load it."""


# ---------------------------------------------------------------------- texts and vectors
def registry_texts(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, str]]:
    """``benchmark_id -> {description, paraphrase}`` from the warehouse ``benchmark`` table.

    The table is the curation registry as loaded (a snapshot carries it), so a run on a snapshot
    sees the texts of that snapshot, not of the installed package.
    """
    rows = con.execute("SELECT benchmark_id, description, paraphrase FROM benchmark ORDER BY benchmark_id").fetchall()
    out: dict[str, dict[str, str]] = {}
    for bid, description, paraphrase in rows:
        texts = {k: v for k, v in (("description", description), ("paraphrase", paraphrase)) if v and v.strip()}
        if texts:
            out[str(bid)] = texts
    return out


def warehouse_text_store(con: duckdb.DuckDBPyConnection) -> TextStore:
    """The frozen text store merged with the registry texts (frozen texts win on a clash)."""
    return load_text_store(extra=registry_texts(con), extra_origin="registry")


def embedding_cache(con: duckdb.DuckDBPyConnection, encoder: Encoder, *, writable: bool) -> EmbeddingCache:
    """Cache vectors in the warehouse ``embedding`` table; read-only when ``writable`` is false."""
    return EmbeddingCache(con, encoder, read_only=not writable)


def canonical_query(task: str, store: TextStore, *, as_is: bool = False) -> tuple[str, str]:
    """The text to embed for a task and how it was obtained.

    Paper 004 §L.5 rewrites a query into the descriptions' register ("This task measures …")
    before embedding. Here: a stored query name (``software_engineering_agent``, see
    ``evalhouse/analytics/data/benchmark_texts.yaml``) gives its §L.6 canonical form; text already
    in the register, or ``as_is``, is embedded as given; anything else is put in the register by
    the template ``This task measures <task>.`` (no language model is involved).
    """
    if not isinstance(task, str) or not task.strip():
        raise ValueError(
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


# ---------------------------------------------------------------------- records
def combined_record(
    *,
    kind: str,
    estimator: str,
    params: Mapping[str, Any],
    inputs: Sequence[Any],
    snapshot_id: str | None,
    started_at: str,
    duration_s: float,
    diagnostics: Mapping[str, Any] | None = None,
    random_state: int | None = None,
) -> AnalysisRecord:
    """An :class:`AnalysisRecord` for a composite analysis whose input is several frames.

    The input hash chains the hashes of every input (scores, embeddings…), so a run id changes
    when any of them does.
    """
    parts = [input_sha256(x) for x in inputs]
    digest = hashlib.sha256("".join(parts).encode()).hexdigest()
    first = inputs[0] if inputs else None
    return AnalysisRecord(
        kind=kind,
        estimator=estimator,
        params=plain_json(dict(params)),
        snapshot_id=snapshot_id,
        input_sha256=digest,
        input_shape=list(np.shape(first)) if first is not None else [],
        random_state=random_state,
        started_at=started_at,
        duration_s=round(duration_s, 6),
        diagnostics=plain_json(dict(diagnostics or {})),
    )


def theta_rows(eq: CharacteristicCurveEquating) -> list[dict[str, Any]]:
    """``analysis_theta`` rows: every input model, θ or NULL with the reason."""
    rows = []
    for model, theta in eq.theta_.items():
        rows.append(
            {
                "model_key": str(model),
                "theta": float(theta) if np.isfinite(theta) else None,
                "n_observed": int(eq.n_observed_.get(model, 0)),
                "reason": eq.excluded_models_.get(str(model)),
            }
        )
    return rows


def curve_rows(eq: CharacteristicCurveEquating) -> list[dict[str, Any]]:
    """``analysis_curve`` rows: a, b, σ and the number of fitted models observed per benchmark."""
    counts = eq.scores_.notna().sum()
    return [
        {
            "benchmark_id": str(bid),
            "a": float(eq.a_[bid]),
            "b": float(eq.b_[bid]),
            "sigma": float(eq.sigma_[bid]),
            "n_observed": int(counts[bid]),
        }
        for bid in eq.benchmarks_
    ]


def _now() -> tuple[str, float]:
    return datetime.now(UTC).isoformat(timespec="seconds"), time.perf_counter()


def plain_json(value: Any) -> Any:
    """NaN and infinities -> None, numpy scalars -> Python, recursively (JSON- and Arrow-ready)."""
    if isinstance(value, dict):
        return {str(k): plain_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_json(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


# ---------------------------------------------------------------------- AA population
def aa_population(
    con: duckdb.DuckDBPyConnection, benchmarks: str | Sequence[str] = "all"
) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """``(wide, meta, used)``: the AA configurations and benchmark columns ``compare`` ranks on.

    Raises :class:`AnalysisDataMissing` when the warehouse holds no ``artificial-analysis`` rows.
    """
    from evalhouse.analytics.frames import aa_frames
    from evalhouse.analytics.paper004 import select_benchmarks

    try:
        full, meta = aa_frames(con)
    except ValueError as exc:
        raise AnalysisDataMissing(f"no {AA_SOURCE} records in this warehouse: {INGEST_AA_HINT}") from exc
    if isinstance(benchmarks, str) and benchmarks not in BENCHMARK_SETS:
        raise ValueError(f"benchmarks={benchmarks!r} is not one of {list(BENCHMARK_SETS)}")
    used = select_benchmarks(full, benchmarks)
    if len(used) < 2:
        raise AnalysisDataMissing(f"fewer than two AA benchmarks have >= 15 observed configurations: {used}")
    wide = eligible_rows(full[used], min(MIN_ROW_BENCHMARKS, len(used)))
    wide.attrs["snapshot_id"] = full.attrs.get("snapshot_id")
    return wide, meta, used


# ---------------------------------------------------------------------- compare
def compare_models(
    con: duckdb.DuckDBPyConnection,
    task: str,
    *,
    top: int = 10,
    encoder: str | Encoder = "wordllama",
    benchmarks: str | Sequence[str] = "all",
    as_is: bool = False,
    min_observed: int = 3,
    bandwidth: float = 0.45,
    shrinkage: str = "support",
    writable: bool = False,
) -> dict[str, Any]:
    """Rank the AA configurations for a task described in words (paper 004 §3.3, BoB-Support).

    Parameters
    ----------
    con : duckdb connection
        A warehouse or an opened snapshot.
    task : str
        Task description, or a stored query name (see :func:`canonical_query`).
    top : int
        Rows of the ranking, the movers and the nearest benchmarks.
    encoder : str or Encoder
        ``wordllama`` (default, offline from its wheel), ``tfidf`` or ``sentence-transformers``.
    benchmarks : "all" or "paper" or sequence
        Benchmark columns (module docstring).
    writable : bool
        Cache vectors in ``embedding``, store the texts used in ``benchmark_text`` and record the
        fit (``analysis_run`` kind ``task_comparison``).

    Returns
    -------
    JSON-ready dict: ``task``, ``query`` (embedded text) and ``query_form``, ``population``,
    ``encoder``, ``nearest_benchmarks``, ``ranking``, ``movers`` (rows: model, name, task_score,
    theta, support, rank_task, rank_theta), ``median_support``, ``far_from_all`` (the task's
    nearest benchmark is farther from it than any benchmark is from its own nearest neighbour: no
    benchmark is specifically about the task, so the adjustment to θ rests on loosely related
    benchmarks), ``analysis_id``.
    """
    from evalhouse.analytics.reweight import fit_bob

    if top < 1:
        raise ValueError(f"top must be >= 1, got {top}")
    store = warehouse_text_store(con)
    query, form = canonical_query(task, store, as_is=as_is)  # empty task fails before any work
    started, t0 = _now()
    wide, meta, used = aa_population(con, benchmarks)
    enc = make_encoder(encoder, store)
    cache = embedding_cache(con, enc, writable=writable)
    emb = embed_benchmarks(store, used, enc, cache=cache)
    eq, bob = fit_bob(
        wide, emb, equating_params={"min_observed": min_observed}, bandwidth=bandwidth, shrinkage=shrinkage
    )
    qvec = cache.encode([query])[0]
    if not np.linalg.norm(qvec) > 0:
        raise ValueError(f"the {enc.name} encoder maps the task to the zero vector (no word it knows); rephrase it")
    result = bob.predict(qvec, top=top)
    names = meta["name"].astype(str)

    def rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
        out = []
        for model, r in frame.head(top).iterrows():
            out.append(
                {
                    "model": str(model),
                    "name": str(names.get(model, model)),
                    "task_score": round(float(r["task_score"]), 6),
                    "theta": round(float(r["theta"]), 6),
                    "support": round(float(r["support"]), 6),
                    "rank_task": int(r["rank_task"]),
                    "rank_theta": int(r["rank_theta"]),
                }
            )
        return out

    nearest = [
        {
            "benchmark": str(r["benchmark"]),
            "distance": round(float(r["distance"]), 6),
            "relevance": round(float(r["relevance"]), 6),
            "u": round(float(r["u"]), 6),
        }
        for _, r in result.nearest.iterrows()
    ]
    snapshot_id = wide.attrs.get("snapshot_id")
    D = bob.distances_.to_numpy().copy()
    np.fill_diagonal(D, np.inf)
    max_nn = float(D.min(axis=1).max())  # the most isolated benchmark's distance to its nearest neighbour
    out: dict[str, Any] = {
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
                "benchmarks with >= 15 observed configurations"
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
        "ranking": rows(result.table),
        "movers": rows(result.movers),
        "normalisation": eq.normalisation_,
        "snapshot_id": snapshot_id,
        "analysis_id": None,
    }
    if writable:
        store_texts(con, _used_texts(store, used))
        record = combined_record(
            kind="task_comparison",
            estimator="evalhouse.analytics.reweight.BalanceOfBenchmarks",
            params={
                **bob.get_params(),
                "min_observed": min_observed,
                "benchmarks": used,
                "encoder": enc.identity,
                "query": query,
                "query_sha256": hashlib.sha256(query.encode()).hexdigest(),
            },
            inputs=[wide, emb],
            snapshot_id=snapshot_id,
            started_at=started,
            duration_s=time.perf_counter() - t0,
            diagnostics={
                "encoder": enc.identity,
                "query_form": form,
                "bob": bob.record_.diagnostics,
                "equating": eq.record_.diagnostics,
                "median_support": out["median_support"],
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
        from evalhouse.warehouse.analysis import record_analysis

        out["analysis_id"] = record_analysis(
            con, record, theta=theta_rows(eq), curve=curve_rows(eq), quantity=quantities
        )
    return out


def _used_texts(store: TextStore, used: Sequence[str]) -> TextStore:
    keep = {k: t for k, t in store.texts.items() if k[0] in set(used)}
    return TextStore(texts=keep, names=dict(store.names))


# ---------------------------------------------------------------------- paper 004
def paper004_meta(meta: pd.DataFrame) -> pd.DataFrame:
    """``aa_frames`` metadata under the column names :mod:`~evalhouse.analytics.paper004` reads."""
    return meta.rename(
        columns={
            "intelligence_index": "intelligenceIndex",
            "developer": "modelCreatorName",
            "release_date": "releaseDate",
        }
    )


def reproduce_paper004_frames(
    wide: pd.DataFrame,
    meta: pd.DataFrame,
    *,
    encoder: str | Encoder = "wordllama",
    benchmarks: str = "paper",
    compare_all: bool = True,
    inner: bool = True,
    n_shuffles: int = 0,
    stress: bool = False,
    con: duckdb.DuckDBPyConnection | None = None,
    writable: bool = False,
) -> dict[str, Any]:
    """Paper 004's AA leave-one-benchmark-out comparison on warehouse frames, as plain JSON.

    ``wide, meta`` come from :func:`evalhouse.analytics.frames.aa_frames`. With ``writable`` the
    embeddings are cached in ``con`` and the run is recorded: ``analysis_run`` (kind
    ``reproduction``, encoder identity in params and diagnostics) plus ``analysis_quantity`` rows
    (BoB level/profile next to the paper's, the baselines' profiles, the paired tests).
    """
    from evalhouse.analytics.paper004 import (
        PAPER_BENCHMARKS,
        PAPER_LEVEL,
        PAPER_PROFILE,
        reproduce_paper004,
        usable_benchmarks,
    )

    started, t0 = _now()
    result = reproduce_paper004(
        (wide, paper004_meta(meta)),
        encoder,
        texts=warehouse_text_store(con) if con is not None else None,
        benchmarks=benchmarks,
        compare_all=compare_all,
        inner=inner,
        n_shuffles=n_shuffles,
        stress=stress,
        con=con if writable else None,
        echo=None,
    )
    lobo = result["lobo"]
    used = list(result["benchmarks"])
    columns = [str(c) for c in wide.columns]
    out: dict[str, Any] = {
        "encoder": result["encoder"],
        "input_columns": columns,
        "usable_columns": usable_benchmarks(wide),
        "benchmarks": used,
        "paper_benchmarks": list(PAPER_BENCHMARKS),
        "paper_benchmarks_missing": [b for b in PAPER_BENCHMARKS if b not in used],
        "not_in_paper": [b for b in columns if b not in PAPER_BENCHMARKS],
        "n_rows": int(result["n_rows"]),
        "paper": {"level": PAPER_LEVEL, "profile": PAPER_PROFILE, "encoder": "Qwen3-Embedding-8B", "benchmarks": 14},
        "lobo": lobo.to_dict(),
        "checks": plain_json(result["checks"]),
        "global_ranking_vs_index": plain_json(result["global_ranking_vs_index"]),
        "density": plain_json(result["density"]),
        "normalisation": "min-max per benchmark over the observed scores of the fitted models",
        "snapshot_id": wide.attrs.get("snapshot_id"),
        "analysis_id": None,
    }
    if "all_columns" in result:
        out["all_columns"] = result["all_columns"].to_dict()
    if "shuffled" in result:
        shuf = result["shuffled"]
        out["shuffled"] = {k: plain_json(v) for k, v in shuf.items() if k != "profiles"}
    if "copy_stress" in result:
        out["copy_stress"] = plain_json(result["copy_stress"]["summary"])
    if "population_shift" in result:
        out["population_shift"] = plain_json(result["population_shift"].to_dict("index"))
    if writable and con is not None:
        out["analysis_id"] = _record_paper004(
            con, wide[used], out=out, lobo=lobo, started=started, duration=time.perf_counter() - t0
        )
    return out


def _record_paper004(
    con: duckdb.DuckDBPyConnection,
    wide: pd.DataFrame,
    *,
    out: dict[str, Any],
    lobo: Any,
    started: str,
    duration: float,
) -> str:
    from evalhouse.analytics.paper004 import PAPER_LEVEL, PAPER_PROFILE
    from evalhouse.warehouse.analysis import record_analysis

    summary, tests = lobo.summary, lobo.tests
    bob = summary.loc[BOB]
    record = combined_record(
        kind="reproduction",
        estimator="evalhouse.analytics.paper004.reproduce_paper004",
        params={"paper": "004", "encoder": out["encoder"], "benchmarks": out["benchmarks"], "min_row_benchmarks": 5},
        inputs=[wide],
        snapshot_id=out["snapshot_id"],
        started_at=started,
        duration_s=duration,
        diagnostics={"encoder": out["encoder"], "checks": out["checks"], "n_rows": out["n_rows"]},
    )
    q: list[dict[str, Any]] = [
        {
            "name": "bob_level",
            "ours": float(bob["level"]),
            "paper": PAPER_LEVEL,
            "tolerance": 0.05,
            "ok": bool(abs(bob["level"] - PAPER_LEVEL) <= 0.05),
            "note": "BoB-Support LOBO level (Spearman with the held-out score), mean over folds",
        },
        {
            "name": "bob_profile",
            "ours": float(bob["profile"]),
            "paper": PAPER_PROFILE,
            "ok": bool(out["checks"]["profile_above_theta"] and out["checks"]["profile_above_uniform"]),
            "note": "BoB-Support LOBO profile; acceptance: above theta alone and the uniform mean",
        },
    ]
    for method, row in summary.iterrows():
        if method == BOB:
            continue
        q.append({"name": f"profile:{method}", "ours": float(row["profile"]), "note": f"level {row['level']:.4f}"})
    for method, row in tests.iterrows():
        q.append(
            {
                "name": f"p_wilcoxon:{method}",
                "ours": float(row["p_wilcoxon"]),
                "note": f"BoB minus {method}: mean diff {row['mean_diff']:+.4f}, Holm p {row['p_holm']:.4f}",
            }
        )
    ranking = out.get("global_ranking_vs_index") or {}
    if ranking.get("spearman") is not None:
        q.append(
            {
                "name": "theta_vs_aa_index_spearman",
                "ours": float(ranking["spearman"]),
                "paper": 0.970,
                "note": f"over {ranking['n']} configurations",
            }
        )
    return record_analysis(con, record, quantity=q)


# ---------------------------------------------------------------------- long CSV
def equate_csv(path: str | Path, *, min_observed: int = 3, n_rounds: int = 6) -> dict[str, Any]:
    """Equate a long CSV (``model, benchmark, score``), see :func:`~evalhouse.analytics.equate.equate_long_csv`.

    Adds ``min_observed`` and a summary line to the JSON-ready result.
    """
    out = equate_long_csv(path, min_observed=min_observed, n_rounds=n_rounds)
    fitted = sum(m["theta"] is not None for m in out["models"])
    out["min_observed"] = min_observed
    out["summary"] = {
        "n_models": len(out["models"]),
        "n_fitted": fitted,
        "n_benchmarks": len(out["benchmarks"]),
        "n_excluded_benchmarks": len(out["excluded_benchmarks"]),
    }
    return out


__all__ = [
    "AA_SOURCE",
    "BENCHMARK_SETS",
    "AnalysisDataMissing",
    "aa_population",
    "canonical_query",
    "combined_record",
    "compare_models",
    "curve_rows",
    "embedding_cache",
    "equate_csv",
    "paper004_meta",
    "plain_json",
    "registry_texts",
    "reproduce_paper004_frames",
    "theta_rows",
    "warehouse_text_store",
]
