-- One source's model x benchmark cells (the input of the hub equating and of the factor grid):
-- the canonical higher-is-better value (v_matrix_long) of every configuration the source reported
-- on every benchmark the source reported, with the benchmark's composite flag (composites such as
-- Epoch's own ECI are a published equating, not an item). $1: the source key.
WITH reported AS (
    SELECT DISTINCT config_id, benchmark_id FROM v_score_current WHERE source_key = $1
)
SELECT
    m.config_id,
    m.base_model_id,
    m.benchmark_id,
    m.value,
    b.is_composite
FROM v_matrix_long m
JOIN benchmark b USING (benchmark_id)
WHERE m.value IS NOT NULL
  AND m.config_id IN (SELECT config_id FROM reported)
  AND m.benchmark_id IN (SELECT benchmark_id FROM reported)
ORDER BY m.config_id, m.benchmark_id;
