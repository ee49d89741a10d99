-- depends: v_config_release_date
-- One row per model configuration with the facts analyses use as covariates, taken from what
-- sources state about it (model_attribute, latest statement per key) and its release date.
CREATE OR REPLACE VIEW v_model_meta AS
WITH attr AS (
    SELECT a.config_id, a.key, a.value
    FROM model_attribute a
    LEFT JOIN evaluation e USING (evaluation_id)
    -- ties (statements loaded in one transaction) broken by source and record id, so the choice is
    -- the same on every run and every thread schedule
    QUALIFY row_number() OVER (PARTITION BY a.config_id, a.key ORDER BY e.loaded_at DESC, a.source_key, a.evaluation_id) = 1
),
wide AS (
    SELECT
        config_id,
        max(CASE WHEN key = 'is_reasoning' THEN json_extract_string(value, '$') END) AS is_reasoning,
        max(CASE WHEN key = 'model_availability' THEN json_extract_string(value, '$') END) AS availability,
        max(CASE WHEN key = 'total_parameters_b' THEN json_extract_string(value, '$') END) AS total_parameters_b,
        max(CASE WHEN key = 'active_parameters_b' THEN json_extract_string(value, '$') END) AS active_parameters_b,
        max(CASE WHEN key = 'training_compute_flop' THEN json_extract_string(value, '$') END) AS training_compute_flop,
        max(CASE WHEN key = 'intelligence_index' THEN json_extract_string(value, '$') END) AS intelligence_index,
        max(CASE WHEN key = 'short_name' THEN json_extract_string(value, '$') END) AS short_name
    FROM attr GROUP BY config_id
)
SELECT
    mc.config_id,
    mc.name,
    mc.base_model_id,
    bm.family_id,
    bm.developer_id,
    rd.release_date,
    rd.precision AS release_date_precision,
    coalesce(TRY_CAST(w.is_reasoning AS BOOLEAN), mc.reasoning_mode IN ('reasoning', 'adaptive')) AS is_reasoning,
    w.availability = 'open_weights' AS is_open_weights,
    TRY_CAST(w.total_parameters_b AS DOUBLE) AS total_parameters,
    TRY_CAST(w.active_parameters_b AS DOUBLE) AS active_parameters,
    TRY_CAST(w.training_compute_flop AS DOUBLE) AS training_compute_flop,
    TRY_CAST(w.intelligence_index AS DOUBLE) AS intelligence_index,
    w.short_name,
    mc.reasoning_mode,
    mc.effort,
    mc.preview
FROM model_config mc
JOIN base_model bm ON bm.base_model_id = mc.base_model_id
LEFT JOIN wide w ON w.config_id = mc.config_id
LEFT JOIN v_config_release_date rd ON rd.config_id = mc.config_id;
