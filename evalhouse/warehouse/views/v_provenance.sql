-- depends: score
-- One row per score with the chain a user audits: score -> evaluation -> raw bytes -> source.
CREATE OR REPLACE VIEW v_provenance AS
SELECT
    s.score_id,
    s.config_id,
    s.benchmark_id,
    s.metric_id,
    s.setup_key,
    s.raw_value,
    s.raw_unit,
    s.value,
    s.unit,
    s.locator AS score_locator,
    s.evaluated_by,
    s.original_source,
    s.original_source_url,
    e.evaluation_id,
    e.locator AS record_locator,
    e.raw_sha256,
    r.url,
    r.retrieved_at,
    r.storage_path,
    src.source_key,
    src.name AS source_name,
    src.tier AS source_tier,
    src.organisation AS source_organisation,
    s.run_id
FROM score s
JOIN evaluation e USING (evaluation_id)
LEFT JOIN source src ON src.source_key = s.source_key
LEFT JOIN (
    SELECT sha256, any_value(url) AS url, min(retrieved_at) AS retrieved_at, any_value(storage_path) AS storage_path
    FROM raw_snapshot GROUP BY sha256
) r ON r.sha256 = e.raw_sha256;
