-- depends: v_score_current
-- The canonical metric of each benchmark (paper 002, C.8): the metric covering the most model
-- configurations unless the registry overrides it for that benchmark; ties by row count, then by
-- name. Accuracy and exact match are different metrics and are never merged here.
CREATE OR REPLACE VIEW v_benchmark_metric AS
WITH coverage AS (
    SELECT benchmark_id, metric_id, count(DISTINCT config_id) AS n_models, count(*) AS n_rows
    FROM v_score_current
    GROUP BY benchmark_id, metric_id
),
ranked AS (
    SELECT
        coverage.*,
        b.canonical_metric AS override,
        row_number() OVER (PARTITION BY coverage.benchmark_id
                           ORDER BY n_models DESC, n_rows DESC, metric_id) AS coverage_rank,
        coalesce(bool_or(coverage.metric_id = b.canonical_metric) OVER (PARTITION BY coverage.benchmark_id), false)
            AS override_present
    FROM coverage
    LEFT JOIN benchmark b USING (benchmark_id)
)
SELECT
    benchmark_id,
    metric_id,
    CASE WHEN override_present THEN 'registry override' ELSE 'most models, then rows, then name' END AS rule,
    n_models,
    n_rows,
    (SELECT list(struct_pack(metric_id := c.metric_id, n_models := c.n_models, n_rows := c.n_rows)
                 ORDER BY c.n_models DESC, c.n_rows DESC, c.metric_id)
     FROM coverage c WHERE c.benchmark_id = ranked.benchmark_id) AS candidates
FROM ranked
WHERE (override_present AND metric_id = override) OR (NOT override_present AND coverage_rank = 1);
