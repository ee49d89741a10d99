-- One load batch of scores (evalhouse.warehouse.load.score_batch) into the tables `score` is a view of
-- (migration 0080): the batch's canonical groups and setups are added once each under their
-- content ids, then every score with the ids of its group and setup. The source row key (what a
-- source row measured and cites: never the fetch time) is derived here from the record, group,
-- setup and score it names (the macro source_row_key, migration 0090). The _batch_* relations are
-- the batch's Arrow tables.
INSERT OR IGNORE INTO score_group
SELECT DISTINCT
    score_group_id(benchmark_raw, benchmark_id, subset, metric_raw, metric_id, raw_unit, unit, lower_is_better, steps),
    benchmark_raw, benchmark_id, subset, metric_raw, metric_id, raw_unit, unit, lower_is_better, steps
FROM _batch_groups;

INSERT OR IGNORE INTO score_setup
SELECT DISTINCT
    score_setup_id(metric_params, metric_params_key, setup_key, setup, generation_config),
    metric_params, metric_params_key, setup_key, setup, generation_config
FROM _batch_cells;

INSERT INTO score_value (
    score_id, fingerprint, evaluation_id, source_key, result_index, evaluation_result_id, group_id, setup_id,
    raw_value, value, stderr, ci_lower, ci_upper, ci_level, n_samples, uncertainty, llm_scoring, source_row_key
)
WITH groups AS (
    SELECT
        i,
        score_group_id(benchmark_raw, benchmark_id, subset, metric_raw, metric_id, raw_unit, unit, lower_is_better,
                       steps) AS group_id,
        benchmark_id, subset, metric_id
    FROM _batch_groups
),
setups AS (
    SELECT
        i, score_setup_id(metric_params, metric_params_key, setup_key, setup, generation_config) AS setup_id,
        metric_params_key, setup_key
    FROM _batch_cells
)
SELECT
    s.score_id, s.fingerprint, r.evaluation_id, r.source_key, s.result_index, s.evaluation_result_id, g.group_id,
    c.setup_id, s.raw_value, s.value, s.stderr, s.ci_lower, s.ci_upper, s.ci_level, s.n_samples, s.uncertainty,
    s.llm_scoring,
    source_row_key(r.source_key, r.source_model_id, r.source_model_name, r.config_id, g.benchmark_id, g.subset,
                   g.metric_id, c.metric_params_key, c.setup_key, r.original_source, r.original_source_url,
                   s.source_record_id, s.evaluation_result_id)
FROM _batch_scores s
JOIN _batch_records r ON r.i = s.rec
JOIN groups g ON g.i = s.grp
JOIN setups c ON c.i = s.cell
ORDER BY s.rec, s.result_index;
