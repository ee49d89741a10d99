-- Pairwise overlap: for each pair of benchmarks, the number of configurations scored on both.
WITH present AS (SELECT DISTINCT config_id, benchmark_id FROM v_matrix_long)
SELECT a.benchmark_id AS benchmark_a, b.benchmark_id AS benchmark_b, count(*) AS n_models
FROM present a JOIN present b USING (config_id)
GROUP BY a.benchmark_id, b.benchmark_id;
