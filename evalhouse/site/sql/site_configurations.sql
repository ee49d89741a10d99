-- Every configuration with current scores, with its own release date (or its base model's) and
-- whether its own claims disagree by more than a month with no verified correction among them
-- (computed here from the evidence, so a snapshot frozen by an earlier evalhouse reads the same).
WITH own AS (
    SELECT config_id,
           coalesce(date_diff('day', min(date) FILTER (WHERE NOT lower_bound),
                                     max(date) FILTER (WHERE NOT lower_bound)) > 31, false)
             AND NOT bool_or(kind = 'manual_correction' AND verification = 'verified') AS conflict
    FROM release_date_evidence WHERE config_id IS NOT NULL GROUP BY config_id
)
SELECT
    mc.config_id, mc.base_model_id, mc.name, mc.reasoning_mode, mc.effort, mc.flags::VARCHAR AS flags,
    rd.release_date, rd.precision AS release_precision, rd.kind AS release_kind, rd.level AS release_level,
    coalesce(own.conflict, false) AS release_conflict,
    (SELECT count(*) FROM v_cell_candidates c WHERE c.config_id = mc.config_id) AS n_scores
FROM model_config mc
LEFT JOIN v_config_release_date rd USING (config_id)
LEFT JOIN own USING (config_id)
WHERE mc.config_id IN (SELECT config_id FROM v_cell_candidates)
ORDER BY mc.base_model_id, mc.config_id
