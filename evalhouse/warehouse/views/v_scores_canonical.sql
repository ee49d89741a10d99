-- depends: v_cell_candidates
-- One value per cell (model configuration x benchmark x metric x setup) under the conflict policy
-- in curation_setting('conflict_policy'):
--   prefer-independent  (default) rows not reported by the model's developer, else the developer's;
--                       a developer's number is never averaged with an independent one
--   prefer-first-party  the developer's rows when there are any, else the others
--   prefer-tier         rows from the best (lowest) source tier
--   mean                every row (paper 002's rule)
--   latest              the most recently loaded row
-- The chosen rows are averaged (rounded to 12 decimals: a parallel sum's last bits depend on the
-- order rows arrive in, and a value must read the same twice). `value` keeps the canonical unit and direction; `value_hib` is
-- oriented so that higher is better (bounded lower-is-better metrics are reflected inside their
-- bounds, unbounded ones negated) and `orientation` says which was done. `spread` is the range of
-- all candidates on the metric's normalised scale and `disagreement` flags it beyond the
-- tolerance in curation_setting('disagreement_tolerance').
CREATE OR REPLACE VIEW v_scores_canonical AS
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
        row_number() OVER (PARTITION BY cc.config_id, cc.benchmark_id, cc.metric_id, cc.setup_key
                           ORDER BY cc.run_started_at DESC NULLS LAST, cc.score_id DESC) AS recency
    FROM v_cell_candidates cc
    WINDOW cell AS (PARTITION BY cc.config_id, cc.benchmark_id, cc.metric_id, cc.setup_key)
),
chosen AS (
    SELECT ranked.*, settings.policy, settings.tolerance
    FROM ranked, settings
    WHERE CASE settings.policy
        WHEN 'mean' THEN true
        WHEN 'prefer-tier' THEN ranked.source_tier = ranked.best_tier
        WHEN 'prefer-first-party' THEN ranked.developer_reported OR NOT ranked.any_developer
        WHEN 'prefer-independent' THEN NOT ranked.developer_reported OR NOT ranked.any_independent
        WHEN 'latest' THEN ranked.recency = 1
        ELSE false
    END
)
SELECT
    config_id,
    benchmark_id,
    metric_id,
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
GROUP BY config_id, benchmark_id, metric_id, setup_key;
