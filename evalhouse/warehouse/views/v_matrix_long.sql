-- depends: v_scores_canonical, v_benchmark_setup
-- Analysis input, long form: one higher-is-better value per model configuration x benchmark, on the
-- benchmark's canonical metric and canonical setup (v_benchmark_setup), whole benchmark only (no
-- subset). Nothing is averaged here: a cell is one canonical value. Benchmark versions stay separate
-- benchmarks; join across a family only on purpose (v_scores_by_family).
CREATE OR REPLACE VIEW v_matrix_long AS
SELECT
    sc.config_id,
    mc.base_model_id,
    bm.family_id,
    mc.name AS config_name,
    sc.benchmark_id,
    sc.metric_id,
    sc.value_hib AS value,
    sc.value AS value_canonical,
    sc.unit,
    sc.orientation,
    sc.setup_key,
    sc.metric_params_key,
    sc.sources,
    sc.disagreement
FROM v_scores_canonical sc
JOIN v_benchmark_setup bs USING (benchmark_id, metric_id, metric_params_key, setup_key)
JOIN model_config mc ON mc.config_id = sc.config_id
JOIN base_model bm ON bm.base_model_id = mc.base_model_id
WHERE sc.subset_key = '';
