-- Groups and setups of the last batch whose content id names different content in the warehouse
-- (60 bits of a sha256: never seen, but two different groups must never become one).
SELECT 'group' AS kind, b.group_id AS id
FROM _batch_group_ids b JOIN score_group g USING (group_id)
WHERE (b.benchmark_raw, b.benchmark_id, b.subset, b.metric_raw, b.metric_id, b.raw_unit, b.unit,
       b.lower_is_better, b.steps)
  IS DISTINCT FROM (g.benchmark_raw, g.benchmark_id, g.subset, g.metric_raw, g.metric_id, g.raw_unit, g.unit,
                    g.lower_is_better, g.steps)
UNION ALL
SELECT 'setup', b.setup_id
FROM _batch_setup_ids b JOIN score_setup s USING (setup_id)
WHERE (b.metric_params::VARCHAR, b.metric_params_key, b.setup_key, b.setup::VARCHAR, b.generation_config::VARCHAR)
  IS DISTINCT FROM (s.metric_params::VARCHAR, s.metric_params_key, s.setup_key, s.setup::VARCHAR,
                    s.generation_config::VARCHAR);
