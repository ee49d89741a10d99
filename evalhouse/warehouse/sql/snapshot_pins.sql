-- Every recorded pin folder with the last time a pin used it.
SELECT path, max(used_at) AS used_at FROM _snapshot_pin GROUP BY path
