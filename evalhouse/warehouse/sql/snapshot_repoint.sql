-- Point the register's row of snapshot $2 back at the folder $1 (an earlier copy of the same
-- state, kept when a new copy of it was removed).
UPDATE snapshot SET path = ? WHERE snapshot_id = ?
