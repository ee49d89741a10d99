-- Result tables of the capabilities-index fit (evalhouse analyze eci). Every row belongs to one
-- analysis_run (analysis_id).
CREATE TABLE analysis_eci (
    analysis_id     TEXT NOT NULL,
    model           TEXT NOT NULL,          -- the source's own model name (Epoch's "Model version")
    model_group     TEXT NOT NULL,          -- the group whose score it carries
    eci             DOUBLE,
    ci_low          DOUBLE,                 -- 90% bootstrap interval
    ci_high         DOUBLE,
    n_benchmarks    INTEGER,
    PRIMARY KEY (analysis_id, model)
);

CREATE TABLE analysis_eci_benchmark (
    analysis_id     TEXT NOT NULL,
    benchmark_id    TEXT NOT NULL,
    edi             DOUBLE,                 -- difficulty on the ECI scale
    slope           DOUBLE,                 -- discrimination per ECI point
    n_models        INTEGER,
    PRIMARY KEY (analysis_id, benchmark_id)
);
