-- Every payload hash the warehouse relies on, with what refers to it: fetch rows
-- (raw_snapshot.sha256), records (evaluation.raw_sha256) and their samples files
-- (evaluation.samples_sha256). Each must have its bytes in the raw store.
SELECT
    sha256,
    list(DISTINCT what ORDER BY what) AS referenced_by,
    count(DISTINCT evaluation_id) AS n_evaluations,
    min(url) AS url
FROM (
    SELECT sha256, 'raw_snapshot' AS what, NULL AS evaluation_id, url FROM raw_snapshot
    UNION ALL
    SELECT raw_sha256, 'evaluation.raw_sha256', evaluation_id, NULL FROM evaluation
    UNION ALL
    SELECT samples_sha256, 'evaluation.samples_sha256', evaluation_id, NULL FROM evaluation
    WHERE samples_sha256 IS NOT NULL
)
GROUP BY sha256
ORDER BY sha256
