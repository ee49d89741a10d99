-- depends: v_scores_canonical, v_benchmark_metric
-- Analysis input, long form: one higher-is-better value per model configuration x benchmark on
-- the benchmark's canonical metric, averaged over setups (shots, agents...) with their count.
-- Benchmark versions stay separate benchmarks; join across a family only on purpose.
CREATE OR REPLACE VIEW v_matrix_long AS
SELECT
    sc.config_id,
    mc.base_model_id,
    bm.family_id,
    mc.name AS config_name,
    sc.benchmark_id,
    sc.metric_id,
    round(avg(sc.value_hib), 12) AS value,
    round(avg(sc.value), 12) AS value_canonical,
    any_value(sc.unit) AS unit,
    any_value(sc.orientation) AS orientation,
    count(*) AS n_setups,
    list(sc.setup_key ORDER BY sc.setup_key) AS setups,
    bool_or(sc.disagreement) AS disagreement
FROM v_scores_canonical sc
JOIN v_benchmark_metric USING (benchmark_id, metric_id)
JOIN model_config mc ON mc.config_id = sc.config_id
JOIN base_model bm ON bm.base_model_id = mc.base_model_id
GROUP BY sc.config_id, mc.base_model_id, bm.family_id, mc.name, sc.benchmark_id, sc.metric_id;
