-- depends: v_score_current
-- Every current source row as a candidate for its cell (model configuration x benchmark x subset x
-- metric x metric parameters x setup), with what the conflict policies need: the source tier, who
-- ran the evaluation, when the run was, and the metric's bounds for orientation and normalisation.
-- The view is the table macro cell_candidates over every current score.
CREATE OR REPLACE MACRO cell_candidates(current) AS TABLE
SELECT
    c.*,
    coalesce(c.subset, '') AS subset_key,
    md5(concat_ws(chr(31), c.config_id, c.benchmark_id, coalesce(c.subset, ''), c.metric_id, c.metric_params_key,
                  c.setup_key)) AS cell_id,
    coalesce(src.tier, 5) AS source_tier,
    r.started_at AS run_started_at,
    coalesce(c.evaluated_by = 'model_developer', false) AS developer_reported,  -- not known: not the developer's
    coalesce(m.min_value, mb.min_value) AS metric_min,
    coalesce(m.max_value, mb.max_value) AS metric_max
FROM query_table(current) c
LEFT JOIN source src ON src.source_key = c.source_key
LEFT JOIN ingest_run r ON r.run_id = c.run_id
LEFT JOIN metric m ON m.metric_id = c.metric_id
LEFT JOIN metric mb ON mb.metric_id = split_part(c.metric_id, '.', 1);

CREATE OR REPLACE VIEW v_cell_candidates AS SELECT * FROM cell_candidates('v_score_current');
