-- The snapshot the site shows: id, label, creation time, versions.
SELECT * FROM snapshot_meta
