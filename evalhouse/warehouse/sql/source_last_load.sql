-- Per source, the last run that loaded rows: its status, what it quarantined and when it started.
-- A quiet night's 'unchanged' run leaves that load's rows and quarantine in place, so they are
-- shown beside the last run's status until a later load replaces them.
SELECT source_key, status, n_quarantined, run_id, started_at
FROM ingest_run
WHERE status IN ('completed', 'partial', 'recanonicalised')
QUALIFY row_number() OVER (PARTITION BY source_key ORDER BY started_at DESC, run_id DESC) = 1;
