-- The canonical cells of some model configurations ($config_ids: every configuration of the base
-- models asked about) on some benchmarks ($benchmark_ids; NULL: any), with each cell's whole
-- setup (one candidate's: the cell key is its defining part) and the sources of its candidates,
-- for audit/near_misses.py to say which key part kept two cells apart.
WITH cells AS (
    SELECT cell_id, config_id, benchmark_id, subset, metric_id, metric_params_key, setup_key,
           any_value(setup ORDER BY score_id) AS setup,
           list_sort(list(DISTINCT source_key)) AS sources,
           count(*) AS n_candidates
    FROM v_cell_candidates
    WHERE list_contains($config_ids, config_id)
      AND ($benchmark_ids IS NULL OR list_contains($benchmark_ids, benchmark_id))
    GROUP BY ALL
)
SELECT c.*, k.value, k.unit, k.decision
FROM cells c
JOIN v_scores_canonical k USING (cell_id)
ORDER BY c.benchmark_id, c.config_id, c.subset NULLS FIRST, c.metric_id, c.metric_params_key, c.setup_key
