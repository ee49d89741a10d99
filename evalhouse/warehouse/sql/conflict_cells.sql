-- Cells with more than one candidate (v_scores_canonical.n_candidates > 1), optionally of one
-- benchmark ($benchmark) and one configuration ($config), with every candidate's value, source
-- and evaluator, the spread between them, the value the current policy chose and the rule that
-- decided (v_scores_canonical.decision).
-- Cells that disagree beyond the tolerance come first, the widest spread first.
SELECT
    k.cell_id, k.config_id, k.benchmark_id, k.subset, k.metric_id, k.metric_params_key, k.setup_key,
    k.value, k.unit, k.policy, k.n_used, k.n_candidates, k.score_ids, k.sources, k.spread, k.disagreement,
    k.candidate_sources, k.n_sources, k.decided_by, k.decision, k.rule_run_id,
    (SELECT list({'score_id': c.score_id, 'source_key': c.source_key, 'source_tier': c.source_tier,
                  'evaluated_by': c.evaluated_by, 'value': c.value, 'run_id': c.run_id,
                  'harness': json_extract_string(c.setup, '$.harness'), 'observed_on': c.observed_on,
                  'used': list_contains(k.score_ids, c.score_id)}
                 ORDER BY c.source_tier, c.source_key, c.score_id)
     FROM v_cell_candidates c WHERE c.cell_id = k.cell_id) AS candidates
FROM v_scores_canonical k
WHERE k.n_candidates > 1
  AND ($benchmark IS NULL OR k.benchmark_id = $benchmark)
  AND ($config IS NULL OR k.config_id = $config)
  AND (NOT $disagreeing OR k.disagreement)
ORDER BY k.disagreement DESC, k.spread DESC NULLS LAST, k.config_id, k.benchmark_id, k.subset_key, k.metric_id,
         k.metric_params_key, k.setup_key
LIMIT $limit;
