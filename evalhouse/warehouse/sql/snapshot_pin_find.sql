-- The snapshot a pin of the state $1 (snapshot.pin.state_key) froze, and its folder.
SELECT snapshot_id, path FROM _snapshot_pin WHERE state_key = ?
