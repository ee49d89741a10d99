-- The canonical cells of every benchmark on its canonical metric: one row per configuration x
-- subset x setup, with the policy's value and the scores it used.
SELECT
    v.cell_id, v.benchmark_id, v.config_id, mc.base_model_id, v.subset, v.setup_key, v.metric_id, v.value, v.unit,
    v.lower_is_better, v.n_used, v.n_candidates, v.policy, v.score_ids, v.sources, v.evaluated_by,
    v.spread, v.disagreement
FROM v_scores_canonical v
JOIN model_config mc USING (config_id)
JOIN v_benchmark_metric bm ON bm.benchmark_id = v.benchmark_id AND bm.metric_id = v.metric_id
ORDER BY v.benchmark_id, v.value_hib DESC NULLS LAST, v.config_id, v.subset NULLS FIRST, v.setup_key
