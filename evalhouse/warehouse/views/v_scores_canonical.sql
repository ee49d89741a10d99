-- depends: v_cell_candidates
-- One value per cell (model configuration x benchmark x subset x metric x metric parameters x setup)
-- under the conflict policy in curation_setting('conflict_policy'):
--   prefer-independent  (default) one row not reported by the model's developer, else the developer's:
--                       the best source tier, then the latest run, then the source key
--   prefer-first-party  one of the developer's rows when there are any, else of the others (same order)
--   prefer-tier         one row from the best (lowest) source tier, then the latest run
--   latest              the most recently loaded row
--   mean                every row, averaged (paper 002's rule) — the only policy that averages, and
--                       only when a person sets it; rounded to 12 decimals so a value reads the same twice
-- Every other candidate stays visible: n_candidates, sources, spread and disagreement say what the
-- choice was made between (`evalhouse conflicts`, `evalhouse audit score`). `value` keeps the canonical unit and direction; `value_hib` is
-- oriented so that higher is better (bounded lower-is-better metrics are reflected inside their
-- bounds, unbounded ones negated) and `orientation` says which was done. `spread` is the range of
-- all candidates on the metric's normalised scale and `disagreement` flags it beyond the
-- tolerance in curation_setting('disagreement_tolerance').
-- The view is the table macro scores_canonical over every candidate; a cell's row depends only on
-- its own candidates, so the macro over a subset of cells (record_conflicts.sql: the cells with
-- more than one candidate) gives exactly the view's rows for those cells.
CREATE OR REPLACE MACRO scores_canonical(candidates) AS TABLE
WITH settings AS (
    SELECT
        (SELECT value FROM curation_setting WHERE key = 'conflict_policy') AS policy,
        (SELECT CAST(value AS DOUBLE) FROM curation_setting WHERE key = 'disagreement_tolerance') AS tolerance
),
ranked AS (
    SELECT
        cc.*,
        count(*) OVER cell AS n_candidates,
        min(cc.source_tier) OVER cell AS best_tier,
        bool_or(cc.developer_reported) OVER cell AS any_developer,
        bool_or(NOT cc.developer_reported) OVER cell AS any_independent,
        max(cc.value) OVER cell - min(cc.value) OVER cell AS raw_spread,
        row_number() OVER (PARTITION BY cc.config_id, cc.benchmark_id, cc.subset_key, cc.metric_id,
                                        cc.metric_params_key, cc.setup_key
                           ORDER BY cc.run_started_at DESC NULLS LAST, cc.observed_at DESC NULLS LAST,
                                    cc.source_key, cc.score_id) AS recency
    FROM query_table(candidates) cc
    WINDOW cell AS (PARTITION BY cc.config_id, cc.benchmark_id, cc.subset_key, cc.metric_id, cc.metric_params_key,
                    cc.setup_key)
),
eligible AS (
    SELECT ranked.*, settings.policy, settings.tolerance,
        CASE settings.policy
            WHEN 'prefer-tier' THEN ranked.source_tier = ranked.best_tier
            WHEN 'prefer-first-party' THEN ranked.developer_reported OR NOT ranked.any_developer
            WHEN 'prefer-independent' THEN NOT ranked.developer_reported OR NOT ranked.any_independent
            ELSE true
        END AS eligible
    FROM ranked, settings
),
chosen AS (
    SELECT * FROM eligible
    WHERE eligible
    QUALIFY policy = 'mean' OR row_number() OVER (
        PARTITION BY config_id, benchmark_id, subset_key, metric_id, metric_params_key, setup_key
        ORDER BY CASE WHEN policy = 'latest' THEN 0 ELSE source_tier END, recency
    ) = 1
)
SELECT
    cell_id,
    config_id,
    benchmark_id,
    any_value(subset) AS subset,
    subset_key,
    metric_id,
    metric_params_key,
    setup_key,
    round(avg(value), 12) AS value,
    any_value(unit) AS unit,
    any_value(lower_is_better) AS lower_is_better,
    round(CASE
        WHEN NOT any_value(lower_is_better) THEN avg(value)
        WHEN any_value(metric_min) IS NOT NULL AND any_value(metric_max) IS NOT NULL
            THEN any_value(metric_min) + any_value(metric_max) - avg(value)
        ELSE -avg(value)
    END, 12) AS value_hib,
    CASE
        WHEN NOT any_value(lower_is_better) THEN 'as-is'
        WHEN any_value(metric_min) IS NOT NULL AND any_value(metric_max) IS NOT NULL THEN 'reflected'
        ELSE 'negated'
    END AS orientation,
    count(*) AS n_used,
    any_value(n_candidates) AS n_candidates,
    any_value(policy) AS policy,
    list(score_id ORDER BY score_id) AS score_ids,
    list(DISTINCT source_key ORDER BY source_key) AS sources,
    list(DISTINCT evaluated_by ORDER BY evaluated_by) AS evaluated_by,
    CASE
        WHEN any_value(metric_min) IS NOT NULL AND any_value(metric_max) IS NOT NULL
             AND any_value(metric_max) > any_value(metric_min)
            THEN any_value(raw_spread) / (any_value(metric_max) - any_value(metric_min))
    END AS spread,
    coalesce(
        any_value(raw_spread) / nullif(any_value(metric_max) - any_value(metric_min), 0) > any_value(tolerance),
        false
    ) AS disagreement
FROM chosen
GROUP BY cell_id, config_id, benchmark_id, subset_key, metric_id, metric_params_key, setup_key;

CREATE OR REPLACE VIEW v_scores_canonical AS SELECT * FROM scores_canonical('v_cell_candidates');
