-- Candidate model configurations for a name typed by a user ($name), with how each matched.
-- `rank` orders the ways of matching; the audit keeps the best-ranked ones that hit: an exact
-- config_id, then a source's model identifier (model_alias, or any evaluation's model_info.id,
-- since a source id can map to several configurations), then a model name, then a base model id.
SELECT DISTINCT rank, matched_by, config_id FROM (
    SELECT 1 AS rank, 'config_id' AS matched_by, config_id FROM model_config WHERE config_id = $name
    UNION ALL
    SELECT 2, 'source_model_id', config_id FROM model_alias WHERE lower(source_model_id) = lower($name)
    UNION ALL
    SELECT 2, 'source_model_id', config_id FROM evaluation WHERE lower(model_source_id) = lower($name)
    UNION ALL
    SELECT 3, 'model_name', config_id FROM model_config WHERE lower(name) = lower($name)
    UNION ALL
    SELECT 3, 'model_name', config_id FROM model_alias WHERE lower(model_name) = lower($name)
    UNION ALL
    SELECT 3, 'model_name', config_id FROM evaluation WHERE lower(model_name) = lower($name)
    UNION ALL
    SELECT 4, 'base_model_id', config_id FROM model_config WHERE base_model_id = $name
)
ORDER BY rank, config_id
