-- Every evaluation with what its model identity is resolved from (warehouse/rederive.py): the
-- record's model_info, the source, and whether the source names models by repository id (an
-- Every Eval Ever datastore) or by display name.
SELECT e.evaluation_id, e.source_key, e.config_id, e.run_id, e.raw_sha256,
       coalesce(src.kind = 'eee_datastore', false) AS self_describing,
       CAST(json_extract(e.record, '$.model_info') AS VARCHAR) AS model_info
FROM evaluation e
LEFT JOIN source src USING (source_key)
ORDER BY e.evaluation_id
