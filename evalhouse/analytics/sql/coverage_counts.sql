-- Per benchmark: how many model configurations have a value (counts only, never the values:
-- inclusion floors are fixed from coverage before anything is looked at, as paper 000 does).
SELECT benchmark_id, count(DISTINCT config_id) AS n_models
FROM v_matrix_long
GROUP BY benchmark_id
ORDER BY n_models DESC, benchmark_id;
