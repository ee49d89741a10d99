-- Record a snapshot in the warehouse. The id is the content hash, so taking the same state
-- again (to another folder, under another name) updates the one row to the latest copy.
INSERT INTO snapshot (snapshot_id, name, created_at, path, manifest)
VALUES (?, ?, ?, ?, ?)
ON CONFLICT (snapshot_id) DO UPDATE SET
    name = excluded.name,
    created_at = excluded.created_at,
    path = excluded.path,
    manifest = excluded.manifest;
