-- One row per benchmark with current scores: registry facts, the canonical metric and counts.
SELECT
    b.benchmark_id, coalesce(b.display_name, b.benchmark_id) AS display_name, b.family_id, b.version,
    b.derived_from, b.modality, b.language, b.is_composite, b.description,
    bm.metric_id AS canonical_metric, bm.rule AS canonical_metric_rule,
    count(DISTINCT mc.base_model_id) AS n_models,
    count(*) AS n_scores,
    list(DISTINCT c.source_key ORDER BY c.source_key) AS sources
FROM v_cell_candidates c
JOIN model_config mc USING (config_id)
JOIN benchmark b ON b.benchmark_id = c.benchmark_id
LEFT JOIN v_benchmark_metric bm ON bm.benchmark_id = b.benchmark_id
GROUP BY ALL
ORDER BY b.benchmark_id
