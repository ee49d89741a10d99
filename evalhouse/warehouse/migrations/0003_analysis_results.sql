-- Result tables of analyses. Every row belongs to one analysis_run (analysis_id), which records
-- the estimator, its parameters, the input hash and the snapshot id it was fitted on.
CREATE TABLE analysis_quantity (
    analysis_id     TEXT NOT NULL,
    name            TEXT NOT NULL,
    ours            DOUBLE,
    paper           DOUBLE,
    tolerance       DOUBLE,
    ok              BOOLEAN,
    note            TEXT,
    PRIMARY KEY (analysis_id, name)
);

CREATE TABLE analysis_theta (
    analysis_id     TEXT NOT NULL,
    model_key       TEXT NOT NULL,          -- config_id, base_model_id or an input id
    theta           DOUBLE,
    n_observed      INTEGER NOT NULL,
    reason          TEXT,                   -- why theta is NULL
    PRIMARY KEY (analysis_id, model_key)
);

CREATE TABLE analysis_curve (
    analysis_id     TEXT NOT NULL,
    benchmark_id    TEXT NOT NULL,
    a               DOUBLE,
    b               DOUBLE,
    sigma           DOUBLE,
    n_observed      INTEGER,
    PRIMARY KEY (analysis_id, benchmark_id)
);

CREATE TABLE analysis_loading (
    analysis_id     TEXT NOT NULL,
    solution        TEXT NOT NULL,          -- e.g. raw, date_adjusted, schmid_leiman
    item            TEXT NOT NULL,
    factor          TEXT NOT NULL,
    loading         DOUBLE,
    PRIMARY KEY (analysis_id, solution, item, factor)
);

CREATE TABLE analysis_factor_grid (
    analysis_id     TEXT NOT NULL,
    dataset         TEXT NOT NULL,
    densifier       TEXT NOT NULL,
    imputer         TEXT NOT NULL,
    n_models        INTEGER,
    n_benchmarks    INTEGER,
    density         DOUBLE,
    k               INTEGER,
    ave             DOUBLE,
    omega_h         DOUBLE,
    phi_avg         DOUBLE,
    heldout_r2      DOUBLE,
    factored        BOOLEAN,
    note            TEXT,
    PRIMARY KEY (analysis_id, dataset, densifier, imputer)
);
