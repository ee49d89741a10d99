-- The chain of one score ($score_id): the score, the evaluation record it belongs to, the run
-- that loaded it, its source, and the model identity it was resolved to. The raw fetches of the
-- record's bytes are listed separately (audit_fetches.sql): one payload can be fetched many times.
SELECT
    s.score_id, s.fingerprint, s.config_id, s.benchmark_id, s.benchmark_raw, s.subset, s.metric_id, s.metric_raw,
    s.metric_params_key, s.metric_params, s.setup_key, s.setup, s.uncertainty, s.observed_at,
    md5(concat_ws(chr(31), s.config_id, s.benchmark_id, coalesce(s.subset, ''), s.metric_id, s.metric_params_key,
                  s.setup_key)) AS cell_id,
    s.raw_value, s.raw_unit, s.value, s.unit, s.lower_is_better,
    s.stderr, s.ci_lower, s.ci_upper, s.ci_level, s.n_samples,
    s.evaluated_by, s.reported_by, s.original_source, s.original_source_url,
    s.locator AS score_locator, s.source_row_key, s.canonical_steps, s.loaded_at,
    e.evaluation_id, e.fingerprint AS evaluation_fingerprint, e.locator AS record_locator,
    e.source_evaluation_id, e.migrated_from, e.datastore_path, e.collection, e.raw_sha256, e.samples_sha256, e.retrieved_timestamp,
    e.evaluation_timestamp, e.model_source_id, e.model_name, e.developer_raw, e.eval_library,
    e.eval_library_version, e.source_type, e.evaluator_relationship,
    s.run_id, r.trigger AS run_trigger, r.started_at AS run_started_at, r.status AS run_status,
    r.parser_version, r.registry_version, r.evalhouse_version,
    s.source_key, src.name AS source_name, src.kind AS source_kind, src.tier AS source_tier,
    src.organisation AS source_organisation, src.homepage AS source_homepage,
    mc.name AS config_name, mc.base_model_id, bm.name AS base_model_name, bm.derived_from, bm.family_id,
    bm.developer_id
FROM score s
LEFT JOIN evaluation e ON e.evaluation_id = s.evaluation_id
LEFT JOIN ingest_run r ON r.run_id = s.run_id
LEFT JOIN source src ON src.source_key = s.source_key
LEFT JOIN model_config mc ON mc.config_id = s.config_id
LEFT JOIN base_model bm ON bm.base_model_id = mc.base_model_id
WHERE s.score_id = $score_id
