-- Every source's model x benchmark cells (the factor grid's "--source all": whatever the warehouse
-- holds): the canonical higher-is-better value (v_matrix_long) of every configuration on every
-- benchmark, with the benchmark's composite flag.
SELECT
    m.config_id,
    m.base_model_id,
    m.benchmark_id,
    m.value,
    b.is_composite
FROM v_matrix_long m
JOIN benchmark b USING (benchmark_id)
WHERE m.value IS NOT NULL
ORDER BY m.config_id, m.benchmark_id;
