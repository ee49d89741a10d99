-- One row per evaluation record: its fingerprint (uniqueness) and whether the bytes it was parsed
-- from were recorded as a fetch (raw_snapshot_ref is NULL when no raw_snapshot row has its sha256).
SELECT
    e.evaluation_id,
    e.fingerprint,
    e.raw_sha256,
    r.sha256 AS raw_snapshot_ref
FROM evaluation e
LEFT JOIN (SELECT DISTINCT sha256 FROM raw_snapshot) r ON r.sha256 = e.raw_sha256
