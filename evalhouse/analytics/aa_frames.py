"""Test-and-reproduction helper: the Artificial Analysis CSV as ``(wide, meta)`` frames.

The warehouse will produce the same two frames from SQL views; this reads the pinned parsed
CSV (``aa_models_raw_parsed.csv``, 548 configurations) with pandas so the analyses and their
tests can run without it. ``wide`` has one row per configuration (index = AA ``slug``) and one
column per canonical benchmark id; ``meta`` has the same index and the model metadata.

Base models (paper 000, robustness check R1) come from :func:`strip_variant_suffixes`, the
paper's own rule (``evalhouse.curation.model_names.paper000_base_name``).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from evalhouse.curation.model_names import paper000_base_name

AA_CANONICAL = {
    "tau2": "tau2_bench",
    "tauBanking": "tau3_banking",
    "terminalbenchV21": "terminal_bench_v2_1",
    "terminalbenchHard": "terminal_bench_hard",
    "scicode": "scicode",
    "lcr": "aa_lcr",
    "omniscience": "aa_omniscience",
    "ifbench": "ifbench",
    "hle": "hle",
    "gpqa": "gpqa_diamond",
    "critpt": "critpt",
    "mmmuPro": "mmmu_pro",
    "apexAgents": "apex_agents",
    "gdpval_elo": "gdpval",
}
AA_BENCHMARKS = tuple(AA_CANONICAL.values())


def strip_variant_suffixes(name: str) -> str:
    """Base-model name for paper 000's R1 deduplication.

    Removes every parenthetical whose content begins (case-sensitively) with ``Non-reasoning``,
    ``Reasoning``, ``high``, ``medium``, ``low``, ``minimal``, ``Preview`` or ``preview``, then
    a trailing bare ``high|medium|low|minimal`` word, then surrounding whitespace.

    Deliberately narrow, because this is the rule that reproduces the paper: keeping the
    highest-intelligence-index row per base among the 421 retained configurations and then
    taking complete cases gives 89 base models with s1 = 90.23% and a date-adjustment drop of
    24.10 points, the paper's values. Parentheticals such as ``(xhigh)``, ``(max)``,
    ``(Adaptive Reasoning, Max Effort)`` and dates like ``(Jan '25)`` stay part of the name,
    and a bare "Preview" in "Gemini 3.1 Pro Preview" is kept. Stripping every parenthetical
    also yields 89 when deduplicating the 421 rows first, but a different set (it merges
    "GPT-5.5 (xhigh)" into "GPT-5.5" and the two "GPT-5.5 Instant" dates) with s1 = 89.97%;
    deduplicating only the 96 complete-case rows gives 88 with that rule and 89 with this
    one, but s1 = 76.3%.

    >>> strip_variant_suffixes("Claude 4.5 Sonnet (Reasoning)")
    'Claude 4.5 Sonnet'
    >>> strip_variant_suffixes("DeepSeek V4 Pro (Reasoning, Max Effort)")
    'DeepSeek V4 Pro'
    >>> strip_variant_suffixes("GPT-5.5 (xhigh)")
    'GPT-5.5 (xhigh)'
    """
    return paper000_base_name(name)


def aa_frames_from_csv(path: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read the AA parsed CSV into ``(wide, meta)``.

    Returns
    -------
    wide : DataFrame
        548 x 14 float scores, columns :data:`AA_BENCHMARKS`, index ``slug``.
    meta : DataFrame
        ``name, base_model, release_date, is_reasoning, is_open_weights, total_parameters,
        intelligence_index, developer`` on the same index.
    """
    raw = pd.read_csv(path).set_index("slug")
    if not raw.index.is_unique:
        raise ValueError(f"{path}: duplicate slugs {list(raw.index[raw.index.duplicated()][:5])}")
    raw.index.name = "model"
    wide = raw[list(AA_CANONICAL)].rename(columns=AA_CANONICAL).astype(float)
    wide.columns.name = "benchmark"
    meta = pd.DataFrame(
        {
            "name": raw["name"].astype(str),
            "base_model": raw["name"].map(strip_variant_suffixes),
            "release_date": pd.to_datetime(raw["releaseDate"], errors="coerce"),
            "is_reasoning": raw["isReasoning"].astype(bool),
            "is_open_weights": raw["isOpenWeights"].astype(bool),
            "total_parameters": raw["totalParameters"].astype(float),
            "intelligence_index": raw["intelligenceIndex"].astype(float),
            "developer": raw["modelCreatorName"].astype(str),
        },
        index=raw.index,
    )
    return wide, meta
