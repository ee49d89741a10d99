-- One row per base model that has current scores: its names, developer, family (and whether it is
-- one of the family's own releases), what the warehouse knows of it (configurations, scores,
-- benchmarks, sources), its chosen release date, whether a source states open weights, and its
-- place in the index's order.
--
-- The order ("knowledge"): sources x benchmarks, most first; then the newest release date; then
-- the latest evaluation; then the id. A model one source scored on 40 benchmarks (40) comes after
-- one three sources scored on 20 (60).
--
-- Open weights: 'yes' when a source states them (Artificial Analysis' model_availability, Epoch's
-- model_accessibility "Open weights (...)", or a transformers architecture read from the model's
-- own Hub repository, as the Hugging Face Open LLM Leaderboard records), 'no' when sources state
-- only closed weights or hosted/API access, NULL when no source says.
WITH cand AS (
    SELECT mc.base_model_id,
           count(DISTINCT c.config_id) AS n_configurations,
           count(*) AS n_scores,
           count(DISTINCT c.benchmark_id) AS n_benchmarks,
           count(DISTINCT c.source_key) AS n_sources,
           list(DISTINCT c.source_key ORDER BY c.source_key) AS sources,
           max(coalesce(c.observed_at, c.run_started_at)) AS last_evaluated
    FROM v_cell_candidates c
    JOIN model_config mc USING (config_id)
    GROUP BY mc.base_model_id
),
weights AS (
    SELECT mc.base_model_id,
           bool_or((a.key = 'model_availability' AND a.value ->> '$' = 'open_weights')
                   OR (a.key = 'model_accessibility' AND starts_with(a.value ->> '$', 'Open weights'))
                   OR a.key = 'architecture') AS stated_open,
           bool_or((a.key = 'model_availability' AND a.value ->> '$' = 'closed_weights')
                   OR (a.key = 'model_accessibility'
                       AND a.value ->> '$' IN ('API access', 'Hosted access (no API)', 'Unreleased'))) AS stated_closed
    FROM model_attribute a
    JOIN model_config mc USING (config_id)
    WHERE a.key IN ('model_availability', 'model_accessibility', 'architecture')
    GROUP BY mc.base_model_id
)
SELECT
    b.base_model_id, b.name, b.developer_id, b.family_id, f.developer_id AS family_developer_id,
    f.developer_id IS NULL OR b.developer_id IS NOT DISTINCT FROM f.developer_id AS official,
    b.derived_from,
    cand.n_configurations, cand.n_scores, cand.n_benchmarks, cand.n_sources, cand.sources,
    cand.n_sources * cand.n_benchmarks AS knowledge,
    cand.last_evaluated,
    rd.release_date, rd.precision AS release_precision, rd.kind AS release_kind,
    coalesce(rd.conflict, false) AS release_conflict,
    CASE WHEN w.stated_open THEN 'yes' WHEN w.stated_closed THEN 'no' END AS open_weights,
    row_number() OVER (
        ORDER BY cand.n_sources * cand.n_benchmarks DESC, rd.release_date DESC NULLS LAST,
                 cand.last_evaluated DESC NULLS LAST, b.base_model_id
    ) AS knowledge_rank
FROM cand
JOIN base_model b USING (base_model_id)
LEFT JOIN model_family f ON f.family_id = b.family_id
LEFT JOIN v_release_date rd ON rd.base_model_id = b.base_model_id
LEFT JOIN weights w ON w.base_model_id = b.base_model_id
ORDER BY knowledge_rank
