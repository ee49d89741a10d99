-- The scores of the configurations $config_ids (optionally one benchmark, by id or raw name),
-- each with its chain summarised: source, first fetch of the record's bytes, locators, whether
-- it is its source row's current value (v_score_current) and whether the canonical value of its
-- cell uses it (v_scores_canonical.score_ids).
WITH chosen AS (
    SELECT * FROM score
    WHERE list_contains($config_ids, config_id)
      AND ($benchmark IS NULL OR benchmark_id = $benchmark)
),
current_ids AS (
    SELECT score_id FROM v_score_current WHERE list_contains($config_ids, config_id)
),
canonical_ids AS (
    SELECT DISTINCT unnest(score_ids) AS score_id FROM v_scores_canonical
    WHERE list_contains($config_ids, config_id)
),
first_fetch AS (
    SELECT sha256, arg_min(url, retrieved_at) AS url, min(retrieved_at) AS retrieved_at,
           count(*) AS n_fetches
    FROM raw_snapshot GROUP BY sha256
)
SELECT
    s.score_id, s.config_id, s.benchmark_id, s.subset, s.metric_id, s.metric_params_key, s.setup_key,
    s.raw_value, s.raw_unit, s.value, s.unit,
    s.evaluated_by, s.reported_by, s.original_source, s.original_source_url,
    s.source_key, src.name AS source_name, src.tier AS source_tier,
    src.organisation AS source_organisation,
    s.evaluation_id, e.raw_sha256, f.url, f.retrieved_at, f.n_fetches,
    e.locator AS record_locator, s.locator AS score_locator, s.canonical_steps, s.run_id,
    s.score_id IN (SELECT score_id FROM current_ids) AS is_current,
    s.score_id IN (SELECT score_id FROM canonical_ids) AS in_canonical
FROM chosen s
LEFT JOIN evaluation e ON e.evaluation_id = s.evaluation_id
LEFT JOIN source src ON src.source_key = s.source_key
LEFT JOIN first_fetch f ON f.sha256 = e.raw_sha256
ORDER BY s.config_id, s.benchmark_id, s.subset NULLS FIRST, s.metric_id, s.setup_key, s.score_id
