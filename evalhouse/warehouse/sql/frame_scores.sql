-- One row per score with what the referential, bounds and uniqueness suites check: each *_ref
-- column is the referenced row's key (NULL when that row is missing), and the value's bounds
-- come from its metric. It reads the tables `score` is a view of, so a score whose evaluation,
-- canonical group or setup is missing is a row here with a NULL ref (the view's joins would drop
-- it). A qualified metric id (`accuracy.easy`, the registry's kind.qualifier form) has no metric
-- row of its own and takes its base metric's row and bounds. The bounds are widened by $epsilon,
-- the tolerance the canonicaliser accepted the value with.
SELECT
    s.score_id,
    s.fingerprint,
    s.value,
    e.evaluation_id AS evaluation_ref,
    mc.config_id AS config_ref,
    b.benchmark_id AS benchmark_ref,
    coalesce(m.metric_id, mb.metric_id) AS metric_ref,
    u.setup_id AS setup_ref,
    CASE WHEN m.metric_id IS NOT NULL THEN m.min_value ELSE mb.min_value END - $epsilon AS lower_bound,
    CASE WHEN m.metric_id IS NOT NULL THEN m.max_value ELSE mb.max_value END + $epsilon AS upper_bound
FROM score_value s
LEFT JOIN evaluation e ON e.evaluation_id = s.evaluation_id
LEFT JOIN score_group g ON g.group_id = s.group_id
LEFT JOIN score_setup u ON u.setup_id = s.setup_id
LEFT JOIN model_config mc ON mc.config_id = e.config_id
LEFT JOIN benchmark b ON b.benchmark_id = g.benchmark_id
LEFT JOIN metric m ON m.metric_id = g.metric_id
LEFT JOIN metric mb ON m.metric_id IS NULL AND mb.metric_id = split_part(g.metric_id, '.', 1)
