-- Record a pin (state key, snapshot id, folder, pinned at, used at); pinning the same state again
-- moves it to its folder of now and marks it used.
INSERT INTO _snapshot_pin (state_key, snapshot_id, path, pinned_at, used_at)
VALUES (?, ?, ?, ?, ?)
ON CONFLICT (state_key) DO UPDATE SET
    snapshot_id = excluded.snapshot_id,
    path = excluded.path,
    used_at = excluded.used_at;
