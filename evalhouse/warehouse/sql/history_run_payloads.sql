-- The payloads one run stored, in the order it fetched them. $1: the run id.
SELECT sha256, url, retrieved_at, content_type, label
FROM raw_snapshot
WHERE run_id = $1
ORDER BY retrieved_at, fetch_id;
