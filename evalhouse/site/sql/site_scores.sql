-- Every current score with what its model page and its audit chain show: the cell it belongs to,
-- whether the conflict policy uses it, who ran and reported it, and the bytes it was read from.
WITH canonical AS (
    SELECT cell_id, unnest(score_ids) AS score_id, policy, n_candidates, spread, disagreement
    FROM v_scores_canonical
)
SELECT
    c.score_id, c.fingerprint, c.cell_id, c.config_id, mc.base_model_id,
    c.benchmark_id, c.subset, c.metric_id, c.metric_params_key, c.setup_key,
    c.raw_value, c.raw_unit, c.value, c.unit, c.lower_is_better,
    c.stderr, c.ci_lower, c.ci_upper, c.ci_level, c.n_samples,
    c.source_key, c.source_tier, c.evaluated_by, c.reported_by, c.original_source, c.original_source_url,
    c.evaluation_id, c.locator, c.canonical_steps::VARCHAR AS canonical_steps, c.run_id,
    p.record_locator, p.raw_sha256, p.url, p.retrieved_at, p.storage_path, p.source_name, p.source_organisation,
    k.score_id IS NOT NULL AS used_by_policy,
    k.policy, coalesce(cell.n_candidates, 1) AS n_candidates, cell.spread, coalesce(cell.disagreement, false) AS disagreement
FROM v_cell_candidates c
JOIN model_config mc USING (config_id)
LEFT JOIN v_provenance p USING (score_id)
LEFT JOIN canonical k ON k.score_id = c.score_id
LEFT JOIN (SELECT DISTINCT cell_id, n_candidates, spread, disagreement FROM canonical) cell ON cell.cell_id = c.cell_id
ORDER BY mc.base_model_id, c.config_id, c.benchmark_id, c.subset NULLS FIRST, c.metric_id, c.setup_key, c.source_key, c.score_id
