-- The canonical value of one cell ($cell_id) under the current conflict policy (v_scores_canonical).
SELECT value, unit, value_hib, orientation, policy, n_used, n_candidates, score_ids, sources,
       evaluated_by, spread, disagreement, candidate_sources, n_sources, decided_by, decision, rule_run_id
FROM v_scores_canonical
WHERE cell_id = $cell_id
