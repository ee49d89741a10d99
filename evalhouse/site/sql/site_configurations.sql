-- Every configuration with current scores, with its own release date (or its base model's).
SELECT
    mc.config_id, mc.base_model_id, mc.name, mc.reasoning_mode, mc.effort, mc.flags::VARCHAR AS flags,
    rd.release_date, rd.precision AS release_precision, rd.kind AS release_kind, rd.level AS release_level,
    coalesce(rd.conflict, false) AS release_conflict,
    (SELECT count(*) FROM v_cell_candidates c WHERE c.config_id = mc.config_id) AS n_scores
FROM model_config mc
LEFT JOIN v_config_release_date rd USING (config_id)
WHERE mc.config_id IN (SELECT config_id FROM v_cell_candidates)
ORDER BY mc.base_model_id, mc.config_id
