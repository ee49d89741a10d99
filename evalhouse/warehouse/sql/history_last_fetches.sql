-- What the last successful fetches of a source left behind, per URL (for conditional GETs), oldest
-- first so that a later row overwrites an earlier one. $1: the source key.
SELECT url, sha256, etag, last_modified
FROM raw_snapshot r
WHERE source_key = $1
  AND run_id IN (
      SELECT run_id FROM ingest_run
      WHERE source_key = $1 AND status IN ('completed', 'partial', 'unchanged', 'recanonicalised')
  )
ORDER BY retrieved_at;
