-- One load batch of scores (evalhouse.warehouse.score_batch): the per-score columns joined to the
-- batch's records, canonical groups and cells. The locator, the source row key (what a source row
-- measured and cites: never the fetch time) and the canonicalisation chain are derived here.
INSERT INTO score (
    score_id, fingerprint, evaluation_id, result_index, evaluation_result_id, source_key, run_id, config_id,
    benchmark_raw, benchmark_id, subset, metric_raw, metric_id, metric_params, metric_params_key, setup_key, setup,
    generation_config, raw_value, raw_unit, value, unit, lower_is_better, stderr, ci_lower, ci_upper, ci_level,
    n_samples, uncertainty, llm_scoring, evaluated_by, reported_by, original_source, original_source_url, locator,
    source_row_key, canonical_steps, observed_at
)
SELECT
    s.score_id, s.fingerprint, r.evaluation_id, s.result_index, s.evaluation_result_id, r.source_key, r.run_id,
    r.config_id, g.benchmark_raw, g.benchmark_id, g.subset, g.metric_raw, g.metric_id, c.metric_params,
    c.metric_params_key, c.setup_key, c.setup, c.generation_config, s.raw_value, g.raw_unit, s.value, g.unit,
    g.lower_is_better, s.stderr, s.ci_lower, s.ci_upper, s.ci_level, s.n_samples, s.uncertainty, s.llm_scoring,
    r.evaluated_by, r.source_key, r.original_source, r.original_source_url,
    r.locator || ' / evaluation_results[' || CAST(s.result_index AS VARCHAR) || ']',
    substr(sha256(concat_ws(chr(31), r.source_key, r.source_model_id, r.source_model_name, r.config_id,
                            g.benchmark_id, coalesce(g.subset, ''), g.metric_id, c.metric_params_key, c.setup_key,
                            coalesce(r.original_source, ''), coalesce(r.original_source_url, ''),
                            s.source_record_id, coalesce(s.evaluation_result_id, ''))), 1, 32),
    to_json(list_concat(r.migration, g.steps, [s.value_step])),
    r.observed_at
FROM _batch_scores s
JOIN _batch_records r ON r.i = s.rec
JOIN _batch_groups g ON g.i = s.grp
JOIN _batch_cells c ON c.i = s.cell
ORDER BY s.rec, s.result_index;
