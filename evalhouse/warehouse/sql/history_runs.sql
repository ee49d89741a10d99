-- Every run, oldest first, with what a report of changes says of it.
SELECT run_id, source_key, trigger, status, started_at, finished_at, n_loaded, n_quarantined, error,
       details->>'$.guard' AS guard
FROM ingest_run
ORDER BY started_at, run_id;
