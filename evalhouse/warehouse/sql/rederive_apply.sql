-- Move re-derived scores (warehouse/rederive.py) to their new configuration, canonical group and
-- setup, and derive their source row keys as a load does (the macro source_row_key). Reads the
-- temporary tables rederive.py filled: _rederive_eval (evaluation -> new configuration),
-- _rederive_group (old group, source, collection, group key -> new group), _rederive_value (score ->
-- value under the new group), _rederive_stay (scores whose value the new group refuses: they keep
-- their group), _rederive_setup (old setup, harness, name setup -> new setup).
CREATE OR REPLACE TEMPORARY TABLE _rederive_move AS
SELECT
    s.score_id,
    coalesce(g.new_group_id, s.group_id) AS group_id,
    coalesce(u.new_setup_id, s.setup_id) AS setup_id,
    coalesce(x.value, s.value) AS value
FROM _rederive_score s
JOIN _rederive_eval e USING (evaluation_id)
LEFT JOIN _rederive_group g
    ON g.group_id = s.group_id AND g.source_key = s.source_key AND g.collection = s.collection
   AND g.group_key = s.group_key AND s.score_id NOT IN (SELECT score_id FROM _rederive_stay)
LEFT JOIN _rederive_setup u
    ON u.setup_id = s.setup_id AND u.eval_library IS NOT DISTINCT FROM s.eval_library AND u.name_setup = e.name_setup
LEFT JOIN _rederive_value x ON x.score_id = s.score_id
WHERE e.changed OR g.new_group_id IS NOT NULL OR u.new_setup_id IS NOT NULL;

UPDATE evaluation SET config_id = e.new_config
FROM _rederive_eval e
WHERE evaluation.evaluation_id = e.evaluation_id AND e.changed;

UPDATE score_value SET group_id = m.group_id, setup_id = m.setup_id, value = m.value
FROM _rederive_move m
WHERE score_value.score_id = m.score_id;

UPDATE score_value SET source_row_key = k.source_row_key
FROM (
    SELECT
        v.score_id,
        source_row_key(v.source_key, e.model_source_id, coalesce(e.model_name, ''), e.config_id, g.benchmark_id,
                       g.subset, g.metric_id, u.metric_params_key, u.setup_key, e.original_source,
                       e.original_source_url,
                       coalesce(s.result -> 'score_details' -> 'details' ->> 'source_record_id', ''),
                       v.evaluation_result_id) AS source_row_key
    FROM score_value v
    JOIN _rederive_move m USING (score_id)
    JOIN _rederive_score s USING (score_id)
    JOIN evaluation e ON e.evaluation_id = v.evaluation_id
    JOIN score_group g ON g.group_id = v.group_id
    JOIN score_setup u ON u.setup_id = v.setup_id
) k
WHERE score_value.score_id = k.score_id;

-- what the source states about a moved model follows it
INSERT OR IGNORE INTO model_attribute
SELECT e.new_config, a.source_key, a.key, a.value, a.evaluation_id, a.raw_sha256
FROM model_attribute a
JOIN _rederive_eval e ON e.evaluation_id = a.evaluation_id AND e.changed AND a.config_id = e.old_config;

DELETE FROM model_attribute
USING _rederive_eval e
WHERE model_attribute.evaluation_id = e.evaluation_id AND e.changed AND model_attribute.config_id = e.old_config;

-- groups and setups no score names any more (content-addressed: a load that needs one adds it again)
DELETE FROM score_group WHERE group_id NOT IN (SELECT group_id FROM score_value);
DELETE FROM score_setup WHERE setup_id NOT IN (SELECT setup_id FROM score_value);
