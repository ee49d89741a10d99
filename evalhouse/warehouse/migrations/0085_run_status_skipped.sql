-- A run may end 'skipped': a plain refresh leaves out a source whose parser was never verified on a
-- recorded real payload, and a replay mirror that holds no payload of a source skips it rather than
-- failing it. DuckDB cannot alter a CHECK constraint, so the table is rebuilt with its rows.
CREATE TABLE ingest_run_v85 (
    run_id              TEXT PRIMARY KEY,
    source_key          TEXT NOT NULL,
    trigger             TEXT NOT NULL,
    started_at          TIMESTAMP NOT NULL,
    finished_at         TIMESTAMP,
    status              TEXT NOT NULL CHECK (status IN ('running', 'completed', 'partial', 'failed', 'unchanged', 'recanonicalised', 'skipped')),
    n_read              INTEGER NOT NULL DEFAULT 0,
    n_loaded            INTEGER NOT NULL DEFAULT 0,
    n_quarantined       INTEGER NOT NULL DEFAULT 0,
    n_duplicate         INTEGER NOT NULL DEFAULT 0,
    n_scores            INTEGER NOT NULL DEFAULT 0,
    error               TEXT,
    duration_s          DOUBLE,
    payload_sha256      TEXT,
    records_fingerprint TEXT,
    parser_version      TEXT,
    registry_version    TEXT,
    evalhouse_version   TEXT,
    details             JSON
);
INSERT INTO ingest_run_v85 SELECT * FROM ingest_run;
DROP TABLE ingest_run;
ALTER TABLE ingest_run_v85 RENAME TO ingest_run;
