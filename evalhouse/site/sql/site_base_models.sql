-- One row per base model that has current scores: its names, developer, family, counts and
-- chosen release date.
SELECT
    b.base_model_id, b.name, b.developer_id, b.family_id, b.derived_from,
    count(DISTINCT c.config_id) AS n_configurations,
    count(*) AS n_scores,
    count(DISTINCT c.benchmark_id) AS n_benchmarks,
    rd.release_date, rd.precision AS release_precision, rd.kind AS release_kind, coalesce(rd.conflict, false) AS release_conflict
FROM v_cell_candidates c
JOIN model_config mc USING (config_id)
JOIN base_model b ON b.base_model_id = mc.base_model_id
LEFT JOIN v_release_date rd ON rd.base_model_id = b.base_model_id
GROUP BY ALL
ORDER BY b.base_model_id
