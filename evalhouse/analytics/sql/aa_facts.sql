-- What the source stated about each configuration (latest record per slug). $1: the source key.
SELECT
    json_extract_string(e.record, '$.model_info.additional_details.slug') AS slug,
    json_extract_string(e.record, '$.model_info.additional_details.aa_model_id') AS aa_model_id,
    e.model_name AS name,
    e.config_id,
    e.developer_raw AS developer,
    json_extract_string(e.record, '$.model_info.additional_details.release_date') AS release_date,
    json_extract_string(e.record, '$.model_info.additional_details.is_reasoning') AS is_reasoning,
    json_extract_string(e.record, '$.model_info.additional_details.model_availability') AS model_availability,
    json_extract_string(e.record, '$.model_info.additional_details.total_parameters_b') AS total_parameters_b,
    json_extract_string(e.record, '$.model_info.additional_details.intelligence_index') AS intelligence_index
FROM evaluation e
WHERE e.source_key = $1
QUALIFY row_number() OVER (PARTITION BY slug ORDER BY e.loaded_at DESC) = 1;
