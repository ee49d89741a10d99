-- Every candidate of one cell ($cell_id): the current rows of every source, with who ran them.
SELECT score_id, source_key, source_tier, evaluated_by, value, unit, run_id, observed_at
FROM v_cell_candidates
WHERE cell_id = $cell_id
ORDER BY source_tier, source_key, score_id
