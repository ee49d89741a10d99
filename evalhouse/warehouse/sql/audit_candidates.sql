-- Every candidate of one cell ($cell_id): the current rows of every source, with who ran them, the
-- keys of the canonical order (tier, who ran it, observation date) and the whole setup (the cell
-- key is its defining part; the rest, such as the harness, are attributes of the candidate).
SELECT score_id, source_key, source_tier, evaluated_by, evaluator_rank, value, unit, run_id, observed_at,
       observed_on, setup
FROM v_cell_candidates
WHERE cell_id = $cell_id
ORDER BY source_tier, source_key, score_id
