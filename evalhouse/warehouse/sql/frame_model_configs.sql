-- One row per model configuration: its base model (NULL when missing), how many evaluation
-- records name it and how many current scores it has. Model configurations come only from loads
-- (there is no model registry), so one that no evaluation names is an orphan; one named only by
-- records without results (a leaderboard listing a model before scoring it) is a model without
-- results (paper 002), reported as a warning.
SELECT
    mc.config_id,
    mc.base_model_id,
    bm.base_model_id AS base_model_ref,
    (SELECT count(*) FROM evaluation e WHERE e.config_id = mc.config_id) AS n_evaluations,
    coalesce(n.n_current_scores, 0) AS n_current_scores
FROM model_config mc
LEFT JOIN base_model bm ON bm.base_model_id = mc.base_model_id
LEFT JOIN (
    SELECT config_id, count(*) AS n_current_scores FROM current_scores GROUP BY config_id
) n ON n.config_id = mc.config_id
