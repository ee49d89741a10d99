-- The rule that decided each cell with more than one candidate (v_scores_canonical.decision), and the
-- sources of all its candidates. A snapshot made before the canonical order was said out loud has
-- no such columns; the site then shows the policy alone.
SELECT cell_id, decided_by, decision, candidate_sources
FROM v_scores_canonical
WHERE n_candidates > 1
