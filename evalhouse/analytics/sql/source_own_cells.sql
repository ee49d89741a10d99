-- One source's own current cells (no other source's rows: the hub fit must not see AA's GPQA):
-- the best value per configuration x benchmark over setups, on each benchmark's canonical metric,
-- non-composite benchmarks only, with the source's own model names and the release date. $1: source key.
WITH names AS (
    SELECT config_id, min(model_name) AS source_model, list(DISTINCT model_name ORDER BY model_name) AS source_models
    FROM model_alias
    WHERE source_key = $1
    GROUP BY config_id
)
SELECT
    s.config_id,
    mc.base_model_id,
    n.source_model,
    n.source_models,
    mm.release_date,
    s.benchmark_id,
    max(s.value) AS value,
    count(*) AS n_rows
FROM v_score_current s
JOIN v_benchmark_metric bm ON bm.benchmark_id = s.benchmark_id AND bm.metric_id = s.metric_id
JOIN benchmark b ON b.benchmark_id = s.benchmark_id
JOIN model_config mc ON mc.config_id = s.config_id
LEFT JOIN names n ON n.config_id = s.config_id
LEFT JOIN (SELECT DISTINCT ON (config_id) config_id, release_date FROM v_model_meta) mm ON mm.config_id = s.config_id
WHERE s.source_key = $1 AND NOT b.is_composite AND s.value IS NOT NULL
GROUP BY ALL
ORDER BY s.config_id, s.benchmark_id;
