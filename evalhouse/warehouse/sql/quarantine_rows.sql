-- Quarantine rows, optionally of one source ($1) and stage ($2), oldest first, at most $3.
SELECT quarantine_id, source_key, stage, locator, reason, raw_sha256, run_id
FROM quarantine
WHERE ($1 IS NULL OR source_key = $1) AND ($2 IS NULL OR stage = $2)
ORDER BY quarantine_id
LIMIT $3;
