-- Every current score with what its model page and its audit chain show (as 'evalhouse audit
-- score' prints it): the cell it belongs to, whether the conflict policy uses it, who ran and
-- reported it, the evaluation record, the run that loaded it, and the bytes it was read from (the
-- first fetch of its payload: the canonical url and, for a mirror replay, the url fetched).
WITH fetches AS (
    SELECT sha256,
           arg_min(url, (retrieved_at, fetch_id)) AS url,
           arg_min(json_extract_string(request_params, '$.mirror'), (retrieved_at, fetch_id)) AS fetched_from,
           min(retrieved_at) AS retrieved_at,
           arg_min(storage_path, (retrieved_at, fetch_id)) AS storage_path,
           count(*) AS n_fetches
    FROM raw_snapshot
    GROUP BY sha256
)
SELECT
    c.score_id, c.fingerprint, c.cell_id, c.config_id, mc.name AS config_name, mc.base_model_id,
    c.benchmark_id, c.benchmark_raw, c.subset, c.metric_id, c.metric_raw, c.metric_params_key, c.setup_key,
    c.setup::VARCHAR AS setup,
    c.raw_value, c.raw_unit, c.value, c.unit, c.lower_is_better,
    c.stderr, c.ci_lower, c.ci_upper, c.ci_level, c.n_samples, c.observed_at, c.loaded_at,
    c.source_key, c.source_tier, c.evaluated_by, c.reported_by, c.original_source, c.original_source_url,
    c.evaluation_id, c.locator, c.canonical_steps::VARCHAR AS canonical_steps, c.run_id,
    e.fingerprint AS evaluation_fingerprint, e.locator AS record_locator, e.raw_sha256, e.datastore_path,
    e.model_source_id, e.model_name AS source_model_name, e.evaluator_relationship,
    f.url, f.fetched_from, f.retrieved_at, f.storage_path, coalesce(f.n_fetches, 0) AS n_fetches,
    src.name AS source_name, src.organisation AS source_organisation,
    r.trigger AS run_trigger, r.status AS run_status, r.parser_version,
    coalesce(list_contains(cell.score_ids, c.score_id), false) AS used_by_policy,
    cell.policy, cell.value AS cell_value, cell.unit AS cell_unit, cell.score_ids AS cell_score_ids, cell.n_used,
    coalesce(cell.n_candidates, 1) AS n_candidates, cell.spread, coalesce(cell.disagreement, false) AS disagreement
FROM v_cell_candidates c
JOIN model_config mc USING (config_id)
JOIN evaluation e ON e.evaluation_id = c.evaluation_id
LEFT JOIN fetches f ON f.sha256 = e.raw_sha256
LEFT JOIN source src ON src.source_key = c.source_key
LEFT JOIN ingest_run r ON r.run_id = c.run_id
LEFT JOIN v_scores_canonical cell ON cell.cell_id = c.cell_id
ORDER BY mc.base_model_id, c.benchmark_id, c.config_id, c.subset NULLS FIRST, c.metric_id, c.setup_key, c.source_key, c.score_id
