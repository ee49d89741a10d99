-- The canonical cells of every benchmark on its canonical metric, each on its board: one board per
-- subset x metric parameters x setup. `main_board` marks the benchmark's own board (the whole
-- benchmark, the setup v_benchmark_setup chose). `rank` is the cell's place on its board, best
-- first, equal values sharing a rank (1, 2, 2, 4). A cell's interval is its used score's own
-- (a CI, or a standard error) when the policy used one score; `n_sources` counts every source
-- with a current candidate for the cell, `candidate_sources` names them.
WITH cand AS (
    SELECT cell_id, count(DISTINCT source_key) AS n_sources,
           list(DISTINCT source_key ORDER BY source_key) AS candidate_sources
    FROM v_cell_candidates
    GROUP BY cell_id
)
SELECT
    v.benchmark_id, v.cell_id, v.config_id, mc.base_model_id, v.subset, v.subset_key, v.metric_params_key, v.setup_key,
    v.metric_id, v.value, v.value_hib, v.unit, v.lower_is_better, v.n_used, v.n_candidates, v.policy, v.score_ids,
    v.sources, v.evaluated_by, v.spread, v.disagreement,
    cand.n_sources, cand.candidate_sources,
    (v.subset_key = '' AND bs.benchmark_id IS NOT NULL) AS main_board,
    rank() OVER (PARTITION BY v.benchmark_id, v.subset_key, v.metric_params_key, v.setup_key
                 ORDER BY v.value_hib DESC NULLS LAST) AS rank,
    u.stderr, u.ci_lower, u.ci_upper, u.ci_level, u.n_samples, u.setup::VARCHAR AS setup,
    rd.release_date, rd.precision AS release_precision
FROM v_scores_canonical v
JOIN model_config mc USING (config_id)
JOIN v_benchmark_metric bm ON bm.benchmark_id = v.benchmark_id AND bm.metric_id = v.metric_id
LEFT JOIN cand ON cand.cell_id = v.cell_id
LEFT JOIN v_benchmark_setup bs
       ON bs.benchmark_id = v.benchmark_id AND bs.metric_id = v.metric_id
      AND bs.metric_params_key = v.metric_params_key AND bs.setup_key = v.setup_key
LEFT JOIN v_cell_candidates u ON v.n_used = 1 AND u.score_id = v.score_ids[1]
LEFT JOIN v_config_release_date rd ON rd.config_id = v.config_id
ORDER BY v.benchmark_id, v.subset_key, v.metric_params_key, v.setup_key, v.value_hib DESC NULLS LAST, v.config_id
