-- depends: v_score_current
-- Every current source row as a candidate for its cell (model configuration x benchmark x subset x
-- metric x metric parameters x the defining part of the setup), with what the conflict policies
-- and the canonical order need: the source tier, who ran the evaluation and its rank, when the
-- row was observed, and the metric's bounds for orientation and normalisation.
-- Who ran it, best first (the third of the canonical order's keys, after policy and tier): a third
-- party that ran the benchmark itself (an independent evaluator, an aggregator's own run), then
-- the benchmark's creators, then the community, then an unnamed runner, then the model's
-- developer (a party to the result).
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
    CASE coalesce(c.evaluated_by, 'unknown')
        WHEN 'independent_evaluator' THEN 1
        WHEN 'aggregator' THEN 1
        WHEN 'benchmark_creator' THEN 2
        WHEN 'community' THEN 3
        WHEN 'model_developer' THEN 5
        ELSE 4
    END AS evaluator_rank,
    CAST(coalesce(c.observed_at, r.started_at) AS DATE) AS observed_on,
    coalesce(m.min_value, mb.min_value) AS metric_min,
    coalesce(m.max_value, mb.max_value) AS metric_max
FROM query_table(current) c
LEFT JOIN source src ON src.source_key = c.source_key
LEFT JOIN ingest_run r ON r.run_id = c.run_id
LEFT JOIN metric m ON m.metric_id = c.metric_id
LEFT JOIN metric mb ON mb.metric_id = split_part(c.metric_id, '.', 1);

CREATE OR REPLACE VIEW v_cell_candidates AS SELECT * FROM cell_candidates('v_score_current');
