-- Every recorded fetch of the payload $sha256, oldest first (the bytes are stored once; each
-- fetch says when and from where they were seen).
SELECT fetch_id, sha256, url, request_params, retrieved_at, storage_path, http_status, size_bytes, content_type,
       etag, last_modified, label, run_id
FROM raw_snapshot
WHERE sha256 = $sha256
ORDER BY retrieved_at, fetch_id
