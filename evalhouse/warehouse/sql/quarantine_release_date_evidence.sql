-- Release-date claims that fail an expectation, moved to quarantine by the checkpoint inside a
-- load (the caller deletes them from release_date_evidence after): one row per claim, the claim
-- itself as the payload, attributed to the load that found it.
INSERT INTO quarantine (run_id, source_key, raw_sha256, locator, stage, reason, payload)
SELECT
    $run_id,
    e.source_key,
    e.raw_sha256,
    'release_date_evidence ' || e.evidence_id,
    'expectation',
    $reason || ' (' || e.kind || ' claim of ' || strftime(e.date, '%Y-%m-%d') || ' for ' || e.base_model_id || ')',
    to_json(e)::VARCHAR
FROM release_date_evidence e
WHERE e.evidence_id IN (SELECT unnest($ids))
ORDER BY e.evidence_id
