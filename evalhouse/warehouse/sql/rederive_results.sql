-- Every stored score with what re-deriving its identities reads (warehouse/rederive.py): its result
-- as the record holds it (each record's results read once), the group key its canonical group was
-- resolved from, the harness, and whether its source describes its own benchmarks (an Every Eval
-- Ever datastore: names resolved from model ids, namespaced benchmarks).
CREATE OR REPLACE TEMPORARY TABLE _rederive_score AS
WITH results AS (
    SELECT evaluation_id, unnest(rs) AS result, unnest(range(len(rs))) AS result_index
    FROM (SELECT evaluation_id, CAST(json_extract(record, '$.evaluation_results[*]') AS JSON[]) AS rs FROM evaluation)
)
SELECT
    v.score_id, v.evaluation_id, v.result_index, v.group_id, v.setup_id, v.source_key, v.raw_value, v.value,
    e.collection, e.eval_library, coalesce(src.kind = 'eee_datastore', false) AS self_describing,
    md5(concat_ws(chr(31), coalesce(r.result ->> 'evaluation_name', ''),
                  coalesce(r.result -> 'source_data' ->> 'dataset_name', ''),
                  coalesce(CAST(r.result -> 'metric_config' AS VARCHAR), ''))) AS group_key,
    r.result
FROM score_value v
JOIN evaluation e USING (evaluation_id)
JOIN results r ON r.evaluation_id = v.evaluation_id AND r.result_index = v.result_index
LEFT JOIN source src ON src.source_key = v.source_key;
