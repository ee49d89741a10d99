-- depends: score
-- Per source: what it holds and how its last run ended.
CREATE OR REPLACE VIEW v_source_status AS
SELECT
    src.source_key,
    src.name,
    src.kind,
    src.tier,
    (SELECT count(*) FROM evaluation e WHERE e.source_key = src.source_key) AS evaluations,
    (SELECT count(*) FROM score s WHERE s.source_key = src.source_key) AS scores,
    (SELECT count(*) FROM quarantine q WHERE q.source_key = src.source_key) AS quarantined,
    last.status AS last_status,
    last.started_at AS last_run_at,
    last.error AS last_error
FROM source src
LEFT JOIN (
    SELECT source_key, status, started_at, error,
           row_number() OVER (PARTITION BY source_key ORDER BY started_at DESC, run_id DESC) AS rn
    FROM ingest_run
) last ON last.source_key = src.source_key AND last.rn = 1;
