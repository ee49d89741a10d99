-- One row per benchmark that must have results: every provisional benchmark (a load created it
-- from a self-describing record, so it exists only because of scores) and every registry
-- benchmark that has been observed (some score row, current or superseded, names it). A
-- registry benchmark never observed is a registry entry waiting for data, not an orphan, and is
-- left out. n_current_scores counts the benchmark's current rows (all metrics and setups).
SELECT
    b.benchmark_id,
    b.registry_version LIKE 'provisional:%' AS provisional,
    coalesce(n.n_current_scores, 0) AS n_current_scores
FROM benchmark b
LEFT JOIN (
    SELECT benchmark_id, count(*) AS n_current_scores FROM current_scores GROUP BY benchmark_id
) n ON n.benchmark_id = b.benchmark_id
WHERE b.registry_version LIKE 'provisional:%'
   OR EXISTS (SELECT 1 FROM score s WHERE s.benchmark_id = b.benchmark_id)
