-- Every candidate of the cells more than one current row gives a value for (what 'evalhouse audit
-- score' lists under "candidates"): value, source, tier, who ran it, the run.
SELECT c.cell_id, c.score_id, c.source_key, c.source_tier, c.evaluated_by, c.value, c.unit, c.run_id
FROM v_cell_candidates c
WHERE c.cell_id IN (SELECT cell_id FROM v_scores_canonical WHERE n_candidates > 1)
ORDER BY c.cell_id, c.source_tier, c.source_key, c.score_id
