-- Base models kept apart whose names loosely match (the same base_model.match_key: paper 002's
-- standard collapse): Qwen2.5-72B and its -Instruct, GPT-J under two developers, a fine-tune
-- and its parent. Identity never merges them; this view is the recorded candidate link a person
-- reviews (and the registry can then document as one model, or leave apart). `reason` says
-- what separates the pair as far as the ids show it.
CREATE OR REPLACE VIEW v_identity_candidates AS
WITH keyed AS (
    SELECT b.base_model_id, b.developer_id, b.match_key, b.derived_from,
           (SELECT count(*) FROM model_config c WHERE c.base_model_id = b.base_model_id) AS n_configs
    FROM base_model b
    WHERE coalesce(b.match_key, '') <> ''
)
SELECT
    a.match_key,
    a.base_model_id AS base_model_a,
    b.base_model_id AS base_model_b,
    a.n_configs AS configs_a,
    b.n_configs AS configs_b,
    CASE
        WHEN a.developer_id <> b.developer_id THEN 'different developers'
        WHEN b.derived_from = a.base_model_id OR a.derived_from = b.base_model_id THEN 'one derives from the other'
        ELSE 'different names under one developer'
    END AS reason
FROM keyed a
JOIN keyed b ON a.match_key = b.match_key AND a.base_model_id < b.base_model_id;
