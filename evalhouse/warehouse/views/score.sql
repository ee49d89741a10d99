-- Every score with its record, canonical group and setup: the columns (and their order) `score`
-- had as a table before migration 0080 stored it in parts. The locator and the canonicalisation
-- chain are derived: the chain is the record's migration steps, the group's steps (benchmark,
-- metric, unit, bounds) and the value's own step, whose numbers DuckDB writes as Python's repr does
-- (shortest round trip). An evaluation's loaded_at is its scores' (one transaction, one timestamp).
CREATE OR REPLACE VIEW score AS
SELECT
    v.score_id,
    v.fingerprint,
    v.evaluation_id,
    v.result_index,
    v.evaluation_result_id,
    v.source_key,
    e.run_id,
    e.config_id,
    g.benchmark_raw,
    g.benchmark_id,
    g.metric_raw,
    g.metric_id,
    u.setup_key,
    u.setup,
    v.raw_value,
    g.raw_unit,
    v.value,
    g.unit,
    g.lower_is_better,
    v.stderr,
    v.ci_lower,
    v.ci_upper,
    v.ci_level,
    v.n_samples,
    e.evaluated_by,
    e.source_key AS reported_by,
    e.original_source,
    e.original_source_url,
    e.locator || ' / evaluation_results[' || CAST(v.result_index AS VARCHAR) || ']' AS locator,
    v.source_row_key,
    to_json(list_concat(
        coalesce(e.migration_steps, []),
        g.steps,
        [CASE
            WHEN g.raw_unit IS NOT DISTINCT FROM g.unit
                THEN 'value ' || CAST(v.raw_value AS VARCHAR) || ' ' || g.unit || ' kept as is'
            ELSE CAST(v.raw_value AS VARCHAR) || ' ' || coalesce(g.raw_unit, 'None') || ' -> '
                || CAST(v.value AS VARCHAR) || ' ' || g.unit
        END]
    )) AS canonical_steps,
    e.loaded_at,
    g.subset,
    u.metric_params,
    u.metric_params_key,
    u.generation_config,
    v.uncertainty,
    e.observed_at,
    v.llm_scoring
FROM score_value v
JOIN evaluation e USING (evaluation_id)
JOIN score_group g USING (group_id)
JOIN score_setup u USING (setup_id);
