-- The rows one run read and its details (the drift guards' figures). $1: the run id.
SELECT n_read, details FROM ingest_run WHERE run_id = $1;
