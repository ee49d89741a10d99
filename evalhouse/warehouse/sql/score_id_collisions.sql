-- Groups and setups of the last batch whose content id names different content in the warehouse
-- (60 bits of a sha256: never seen, but two different groups must never become one).
SELECT 'group' AS kind, g.group_id AS id
FROM _batch_groups b
JOIN score_group g
  ON g.group_id = score_group_id(b.benchmark_raw, b.benchmark_id, b.subset, b.metric_raw, b.metric_id, b.raw_unit,
                                 b.unit, b.lower_is_better, b.steps)
WHERE (b.benchmark_raw, b.benchmark_id, b.subset, b.metric_raw, b.metric_id, b.raw_unit, b.unit,
       b.lower_is_better, b.steps)
  IS DISTINCT FROM (g.benchmark_raw, g.benchmark_id, g.subset, g.metric_raw, g.metric_id, g.raw_unit, g.unit,
                    g.lower_is_better, g.steps)
UNION ALL
SELECT 'setup', u.setup_id
FROM _batch_cells b
JOIN score_setup u
  ON u.setup_id = score_setup_id(b.metric_params, b.metric_params_key, b.setup_key, b.setup, b.generation_config)
WHERE (b.metric_params, b.metric_params_key, b.setup_key, b.setup, b.generation_config)
  IS DISTINCT FROM (u.metric_params::VARCHAR, u.metric_params_key, u.setup_key, u.setup::VARCHAR,
                    u.generation_config::VARCHAR);
