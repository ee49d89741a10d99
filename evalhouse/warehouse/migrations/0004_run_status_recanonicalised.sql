-- A run may end 'recanonicalised': the payload was unchanged but the registries (metrics, units,
-- benchmarks, developers, model-name rules) changed since the source's rows were canonicalised,
-- so the stored payloads were parsed and canonicalised again. DuckDB cannot alter a CHECK
-- constraint, so the table is rebuilt with its rows.
CREATE TABLE ingest_run_v4 (
    run_id              TEXT PRIMARY KEY,
    source_key          TEXT NOT NULL,
    trigger             TEXT NOT NULL,
    started_at          TIMESTAMP NOT NULL,
    finished_at         TIMESTAMP,
    status              TEXT NOT NULL CHECK (status IN ('running', 'completed', 'partial', 'failed', 'unchanged', 'recanonicalised')),
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
INSERT INTO ingest_run_v4 SELECT * FROM ingest_run;
DROP TABLE ingest_run;
ALTER TABLE ingest_run_v4 RENAME TO ingest_run;
