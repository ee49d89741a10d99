-- The canonical benchmark each benchmark name of a source's rows was mapped to. $1: the source key.
SELECT benchmark_raw, min(benchmark_id) AS benchmark_id
FROM score
WHERE source_key = $1
GROUP BY benchmark_raw;
