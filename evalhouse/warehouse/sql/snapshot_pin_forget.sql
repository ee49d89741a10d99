-- Forget the pins whose folders were pruned ($1: a JSON list of their paths).
DELETE FROM _snapshot_pin WHERE list_contains(CAST(json(?) AS VARCHAR[]), path)
