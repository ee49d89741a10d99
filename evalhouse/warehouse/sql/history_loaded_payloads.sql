-- Every distinct payload of a source that a loading run read, oldest first. $1: the source key.
SELECT sha256, url, retrieved_at, content_type, label
FROM (
    SELECT DISTINCT ON (r.sha256) r.sha256, r.url, r.retrieved_at, r.content_type, r.label
    FROM raw_snapshot r
    JOIN ingest_run i USING (run_id)
    WHERE r.source_key = $1 AND i.status IN ('completed', 'partial', 'recanonicalised')
    ORDER BY r.sha256, r.retrieved_at
)
ORDER BY retrieved_at;
