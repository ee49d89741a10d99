-- The headline counts of the index page.
SELECT
    (SELECT count(*) FROM v_cell_candidates) AS scores,
    (SELECT count(*) FROM v_scores_canonical) AS cells,
    (SELECT count(*) FROM v_scores_canonical WHERE disagreement) AS cells_disagreeing,
    (SELECT count(DISTINCT config_id) FROM v_cell_candidates) AS configurations,
    (SELECT count(DISTINCT mc.base_model_id) FROM v_cell_candidates JOIN model_config mc USING (config_id)) AS base_models,
    (SELECT count(DISTINCT benchmark_id) FROM v_cell_candidates) AS benchmarks,
    (SELECT count(*) FROM source) AS sources,
    (SELECT count(*) FROM quarantine) AS quarantined
