-- The canonical value of one cell under the current conflict policy (v_scores_canonical).
SELECT value, unit, value_hib, orientation, policy, n_used, n_candidates, score_ids, sources,
       evaluated_by, spread, disagreement
FROM v_scores_canonical
WHERE config_id = $config_id AND benchmark_id = $benchmark_id AND metric_id = $metric_id
  AND setup_key = $setup_key
