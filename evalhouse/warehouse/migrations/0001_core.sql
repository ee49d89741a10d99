-- The warehouse spine: where data came from, what was parsed from it, and what was refused.
-- Referential integrity is checked by the expectations suite after every load rather than by
-- FOREIGN KEY clauses: DuckDB cannot update a row that a foreign key references, and the
-- curation steps update identity rows in place.

CREATE TABLE source (
    source_key      TEXT PRIMARY KEY,
    name            TEXT NOT NULL,
    kind            TEXT NOT NULL,         -- leaderboard, api, paper, model_card, harness_log, eee_datastore, aggregator_export
    tier            SMALLINT CHECK (tier BETWEEN 1 AND 4),
    organisation    TEXT,
    homepage        TEXT,
    registered_at   TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE TABLE ingest_run (
    run_id              TEXT PRIMARY KEY,
    source_key          TEXT NOT NULL,
    trigger             TEXT NOT NULL,     -- refresh, ingest, reparse, import-eee
    started_at          TIMESTAMP NOT NULL,
    finished_at         TIMESTAMP,
    status              TEXT NOT NULL CHECK (status IN ('running', 'completed', 'partial', 'failed', 'unchanged')),
    n_read              INTEGER NOT NULL DEFAULT 0,
    n_loaded            INTEGER NOT NULL DEFAULT 0,
    n_quarantined       INTEGER NOT NULL DEFAULT 0,
    n_duplicate         INTEGER NOT NULL DEFAULT 0,
    n_scores            INTEGER NOT NULL DEFAULT 0,
    error               TEXT,
    duration_s          DOUBLE,
    payload_sha256      TEXT,              -- sha256 of the payload(s) this run parsed (sorted, joined)
    records_fingerprint TEXT,              -- sha256 over the sorted fingerprints of the parsed records
    parser_version      TEXT,
    registry_version    TEXT,
    evalhouse_version   TEXT,
    details             JSON
);

-- One row per fetch; the bytes themselves live once in the content-addressed raw store.
CREATE TABLE raw_snapshot (
    fetch_id        TEXT PRIMARY KEY,
    sha256          TEXT NOT NULL,
    source_key      TEXT NOT NULL,
    run_id          TEXT,
    url             TEXT NOT NULL,         -- secrets redacted
    request_params  JSON,                  -- secrets redacted
    retrieved_at    TIMESTAMP NOT NULL,
    http_status     INTEGER,
    size_bytes      BIGINT NOT NULL,
    content_type    TEXT,
    etag            TEXT,
    last_modified   TEXT,
    storage_path    TEXT NOT NULL,         -- relative to the raw store root
    label           TEXT
);
CREATE INDEX raw_snapshot_sha ON raw_snapshot (sha256);

-- One EEE aggregate record, exactly as loaded (the JSON is the record's stamp-free content).
CREATE TABLE evaluation (
    evaluation_id          TEXT PRIMARY KEY,
    fingerprint            TEXT NOT NULL UNIQUE,
    source_key             TEXT NOT NULL,
    collection             TEXT NOT NULL,  -- EEE datastore collection the record belongs to
    datastore_path         TEXT,           -- data/<collection>/<developer>/<model>/<uuid>.json when imported from one
    run_id                 TEXT NOT NULL,
    raw_sha256             TEXT NOT NULL,
    locator                TEXT NOT NULL,
    schema_version         TEXT NOT NULL,
    retrieved_timestamp    TEXT NOT NULL,
    evaluation_timestamp   TEXT,
    model_source_id        TEXT NOT NULL,  -- model_info.id verbatim
    model_name             TEXT,
    developer_raw          TEXT,
    config_id              TEXT NOT NULL,
    eval_library           TEXT,
    eval_library_version   TEXT,
    source_type            TEXT,
    evaluator_relationship TEXT,
    samples_sha256         TEXT,
    record                 JSON NOT NULL,
    loaded_at              TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE SEQUENCE score_id_seq START 1;

-- One metric value with its raw and canonical forms and the locator of its bytes.
CREATE TABLE score (
    score_id             BIGINT PRIMARY KEY DEFAULT nextval('score_id_seq'),
    fingerprint          TEXT NOT NULL UNIQUE,
    evaluation_id        TEXT NOT NULL,
    result_index         INTEGER NOT NULL,
    evaluation_result_id TEXT,
    source_key           TEXT NOT NULL,
    run_id               TEXT NOT NULL,
    config_id            TEXT NOT NULL,
    benchmark_raw        TEXT NOT NULL,
    benchmark_id         TEXT NOT NULL,
    metric_raw           TEXT,
    metric_id            TEXT NOT NULL,
    setup_key            TEXT NOT NULL DEFAULT '',
    setup                JSON,
    raw_value            DOUBLE NOT NULL,
    raw_unit             TEXT,
    value                DOUBLE NOT NULL,
    unit                 TEXT NOT NULL,
    lower_is_better      BOOLEAN NOT NULL,
    stderr               DOUBLE,
    ci_lower             DOUBLE,
    ci_upper             DOUBLE,
    ci_level             DOUBLE,
    n_samples            BIGINT,
    evaluated_by         TEXT NOT NULL,    -- who ran it: model_developer, benchmark_creator, independent_evaluator, aggregator, community, unknown
    reported_by          TEXT NOT NULL,    -- the source that reported it
    original_source      TEXT,             -- the source the reporter cites (e.g. Epoch's "Source")
    original_source_url  TEXT,
    locator              TEXT NOT NULL,
    source_row_key       TEXT NOT NULL,    -- what the source row measured and cites; never the fetch time
    canonical_steps      JSON,             -- raw value/unit -> canonical, step by step
    loaded_at            TIMESTAMP NOT NULL DEFAULT current_timestamp
);
CREATE INDEX score_cell ON score (benchmark_id, metric_id, config_id);
CREATE INDEX score_evaluation ON score (evaluation_id);

-- Model identity: source identifier -> configuration -> base model -> family (-> developer).
CREATE TABLE developer (
    developer_id    TEXT PRIMARY KEY,
    name            TEXT NOT NULL
);

CREATE TABLE model_family (
    family_id       TEXT PRIMARY KEY,
    name            TEXT NOT NULL,
    developer_id    TEXT
);

CREATE TABLE base_model (
    base_model_id   TEXT PRIMARY KEY,
    name            TEXT NOT NULL,
    family_id       TEXT NOT NULL,
    developer_id    TEXT,
    scope           TEXT                   -- a source key for generic names that never merge across sources
);

CREATE TABLE model_config (
    config_id        TEXT PRIMARY KEY,
    base_model_id    TEXT NOT NULL,
    name             TEXT NOT NULL,
    reasoning_mode   TEXT,
    effort           TEXT,
    context_variant  TEXT,
    preview          BOOLEAN NOT NULL DEFAULT false,
    flags            JSON
);

CREATE TABLE model_alias (
    source_key       TEXT NOT NULL,
    source_model_id  TEXT NOT NULL,
    config_id        TEXT NOT NULL,
    model_name       TEXT,
    developer_raw    TEXT,
    first_run_id     TEXT,
    PRIMARY KEY (source_key, source_model_id)
);

-- Facts a source states about a model (parameters, compute, open weights, an index value...).
CREATE TABLE model_attribute (
    config_id        TEXT NOT NULL,
    source_key       TEXT NOT NULL,
    key              TEXT NOT NULL,
    value            JSON NOT NULL,
    evaluation_id    TEXT NOT NULL,
    raw_sha256       TEXT NOT NULL,
    PRIMARY KEY (config_id, source_key, key, evaluation_id)
);

CREATE TABLE release_date_evidence (
    evidence_id      TEXT PRIMARY KEY,
    config_id        TEXT,
    base_model_id    TEXT NOT NULL,
    date             DATE NOT NULL,
    precision        TEXT NOT NULL CHECK (precision IN ('day', 'month', 'year')),
    kind             TEXT NOT NULL,
    source_key       TEXT,
    url              TEXT,
    raw_sha256       TEXT,
    lower_bound      BOOLEAN NOT NULL DEFAULT false,
    verification     TEXT NOT NULL DEFAULT 'unverified',
    reason           TEXT,
    recorded_by      TEXT,
    recorded_at      TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- Canonical benchmarks and metrics, synchronised from the versioned registry files.
CREATE TABLE benchmark_family (
    family_id       TEXT PRIMARY KEY,
    name            TEXT NOT NULL,
    description     TEXT
);

CREATE TABLE benchmark (
    benchmark_id    TEXT PRIMARY KEY,
    display_name    TEXT NOT NULL,
    family_id       TEXT,
    version         TEXT,
    derived_from    TEXT,
    modality        TEXT,
    language        TEXT,
    subjects        TEXT[],
    is_composite    BOOLEAN NOT NULL DEFAULT false,
    description     TEXT,
    paraphrase      TEXT,
    canonical_metric TEXT,                  -- per-benchmark override of the coverage rule
    registry_version TEXT NOT NULL
);

CREATE TABLE benchmark_alias (
    alias           TEXT NOT NULL,          -- case- and whitespace-normalised
    source_key      TEXT NOT NULL DEFAULT '*',
    benchmark_id    TEXT NOT NULL,
    PRIMARY KEY (alias, source_key)
);

CREATE TABLE metric (
    metric_id        TEXT PRIMARY KEY,
    kind             TEXT NOT NULL,
    unit             TEXT NOT NULL,
    min_value        DOUBLE,
    max_value        DOUBLE,
    lower_is_better  BOOLEAN NOT NULL,
    description      TEXT,
    registry_version TEXT NOT NULL
);

CREATE TABLE metric_alias (
    alias           TEXT PRIMARY KEY,
    metric_id       TEXT NOT NULL
);

CREATE SEQUENCE quarantine_id_seq START 1;

-- What could not be validated or mapped: nothing is dropped without a row here.
CREATE TABLE quarantine (
    quarantine_id   BIGINT PRIMARY KEY DEFAULT nextval('quarantine_id_seq'),
    run_id          TEXT,
    source_key      TEXT,
    raw_sha256      TEXT,
    locator         TEXT NOT NULL,
    stage           TEXT NOT NULL,          -- parse, validate, canonicalise, load
    reason          TEXT NOT NULL,
    payload         TEXT,
    created_at      TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE SEQUENCE decision_id_seq START 1;

CREATE TABLE curation_decision (
    decision_id     BIGINT PRIMARY KEY DEFAULT nextval('decision_id_seq'),
    kind            TEXT NOT NULL,          -- exact_duplicate, conflict, metric_choice, correction, ...
    rule            TEXT NOT NULL,
    subject         JSON NOT NULL,
    detail          JSON,
    run_id          TEXT,
    created_at      TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE TABLE snapshot (
    snapshot_id     TEXT PRIMARY KEY,
    name            TEXT,
    created_at      TIMESTAMP NOT NULL,
    path            TEXT,
    manifest        JSON NOT NULL
);

CREATE TABLE analysis_run (
    analysis_id     TEXT NOT NULL,
    kind            TEXT NOT NULL,
    estimator       TEXT NOT NULL,
    snapshot_id     TEXT,
    input_sha256    TEXT NOT NULL,
    params          JSON NOT NULL,
    record          JSON NOT NULL,
    created_at      TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE TABLE validation_result (
    validation_id   TEXT NOT NULL,
    run_id          TEXT,
    suite           TEXT NOT NULL,
    expectation     TEXT NOT NULL,
    success         BOOLEAN NOT NULL,
    observed        JSON,
    created_at      TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE TABLE embedding (
    encoder         TEXT NOT NULL,
    revision        TEXT NOT NULL,
    dim             INTEGER NOT NULL,
    text_sha256     TEXT NOT NULL,
    vector          FLOAT[] NOT NULL,
    vector_sha256   TEXT NOT NULL,
    created_at      TIMESTAMP NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (encoder, revision, dim, text_sha256)
);

CREATE TABLE benchmark_text (
    benchmark_id    TEXT NOT NULL,
    kind            TEXT NOT NULL,          -- description, paraphrase, query
    text            TEXT NOT NULL,
    text_sha256     TEXT NOT NULL,
    origin          TEXT NOT NULL,
    PRIMARY KEY (benchmark_id, kind, text_sha256)
);
