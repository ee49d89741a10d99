-- depends: v_scores_canonical, v_benchmark_metric
-- The canonical setup of each benchmark on its canonical metric, for analyses that need one value
-- per model and benchmark: among whole-benchmark cells (no subset), the metric parameters and setup
-- that cover the most model configurations, then the most cells, then the shortest key. Other setups
-- (another shot count, another agent scaffold, pass@8) stay their own cells; they are never averaged
-- into the canonical one.
CREATE OR REPLACE VIEW v_benchmark_setup AS
SELECT
    sc.benchmark_id,
    sc.metric_id,
    sc.metric_params_key,
    sc.setup_key,
    count(DISTINCT sc.config_id) AS n_models,
    'most models, then cells, then the shortest setup' AS rule
FROM v_scores_canonical sc
JOIN v_benchmark_metric bm USING (benchmark_id, metric_id)
WHERE sc.subset_key = ''
GROUP BY sc.benchmark_id, sc.metric_id, sc.metric_params_key, sc.setup_key
QUALIFY row_number() OVER (
    PARTITION BY sc.benchmark_id, sc.metric_id
    ORDER BY count(DISTINCT sc.config_id) DESC, count(*) DESC, length(sc.metric_params_key) + length(sc.setup_key),
             sc.metric_params_key, sc.setup_key
) = 1;
