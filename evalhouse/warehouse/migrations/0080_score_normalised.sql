-- A score is stored once per value, not once per value with its record, group and setup repeated.
--
-- `score` had 39 columns of which most repeat: who ran and reported it, what it cites and when it
-- was observed are the same for every result of a record (now columns of `evaluation`); benchmark,
-- subset, metric, units, direction and the steps that named them are the same for every result of
-- one canonical group (`score_group`); metric parameters, setup and generation config are the same
-- for every result of one setup (`score_setup`). What varies per result is `score_value`. `score`
-- is now a view joining the four (evalhouse/warehouse/views/score.sql) with the same columns, in the
-- same order, holding the same values; the locator and the canonicalisation chain are derived there
-- (the chain is the record's migration steps, the group's steps and the value's own step).
-- At 10^6 scores a load wrote ~1.1 KB per score; it now writes ~0.3 KB.
--
-- Group and setup ids are derived from their content (the first 60 bits of a sha256), so the same
-- group loaded by two sources, or by one source twice, is one row, and two warehouses holding the
-- same scores hold the same ids whatever order they were loaded in.

CREATE MACRO score_group_id(benchmark_raw, benchmark_id, subset, metric_raw, metric_id, raw_unit, unit,
                            lower_is_better, steps) AS
    CAST('0x' || left(sha256(CAST(to_json([benchmark_raw, benchmark_id, subset, metric_raw, metric_id, raw_unit,
                                           unit, CAST(lower_is_better AS VARCHAR), CAST(to_json(steps) AS VARCHAR)])
                                  AS VARCHAR)), 15) AS BIGINT);

CREATE MACRO score_setup_id(metric_params, metric_params_key, setup_key, setup, generation_config) AS
    CAST('0x' || left(sha256(CAST(to_json([CAST(metric_params AS VARCHAR), metric_params_key, setup_key,
                                           CAST(setup AS VARCHAR), CAST(generation_config AS VARCHAR)])
                                  AS VARCHAR)), 15) AS BIGINT);

CREATE TABLE score_group (
    group_id         BIGINT PRIMARY KEY,    -- score_group_id(...) of the columns below
    benchmark_raw    TEXT NOT NULL,
    benchmark_id     TEXT NOT NULL,
    subset           TEXT,
    metric_raw       TEXT,
    metric_id        TEXT NOT NULL,
    raw_unit         TEXT,
    unit             TEXT NOT NULL,
    lower_is_better  BOOLEAN NOT NULL,
    steps            TEXT[] NOT NULL        -- benchmark, metric, unit (and conversion), bounds
);

CREATE TABLE score_setup (
    setup_id           BIGINT PRIMARY KEY,  -- score_setup_id(...) of the columns below
    metric_params      JSON,
    metric_params_key  TEXT NOT NULL DEFAULT '',
    setup_key          TEXT NOT NULL DEFAULT '',
    setup              JSON,
    generation_config  JSON
);

-- A score's id is the first 62 bits of its fingerprint (evalhouse.warehouse.load_rows.score_id), and
-- the CHECK holds every row to that: with the key on score_id, a fingerprint can be there only once
-- (two different fingerprints sharing 62 bits would be refused, never merged), without a second
-- index over 64-character strings, which cost a load more time and memory than all the others.
-- Hashes (random hex), record ids and uncertainty JSON are stored with zstd: as small as DuckDB's
-- own choice and a quarter cheaper to write at each checkpoint.
CREATE TABLE score_value (
    score_id             BIGINT PRIMARY KEY
                         CHECK (score_id = CAST(CAST('0x' || left(fingerprint, 16) AS UBIGINT) & 4611686018427387903
                                                AS BIGINT)),
    fingerprint          TEXT USING COMPRESSION zstd NOT NULL,
    evaluation_id        TEXT USING COMPRESSION zstd NOT NULL,
    source_key           TEXT NOT NULL,
    result_index         INTEGER NOT NULL,
    evaluation_result_id TEXT,
    group_id             BIGINT NOT NULL,
    setup_id             BIGINT NOT NULL,
    raw_value            DOUBLE NOT NULL,
    value                DOUBLE NOT NULL,
    stderr               DOUBLE,
    ci_lower             DOUBLE,
    ci_upper             DOUBLE,
    ci_level             DOUBLE,
    n_samples            BIGINT,
    uncertainty          JSON USING COMPRESSION zstd,
    llm_scoring          JSON,
    source_row_key       TEXT USING COMPRESSION zstd NOT NULL
);

-- The evaluation table again, with what every score of a record shares at its end, and the
-- record (the whole EEE JSON, ~15 KB for 25 results) compressed with zstd: DuckDB's default
-- analysis of such long strings cost a second per 4,000 records at every checkpoint and gave a
-- file five times larger. DuckDB changes a column's compression only when a table is created.
CREATE TABLE evaluation_v8 (
    evaluation_id          TEXT PRIMARY KEY,
    fingerprint            TEXT NOT NULL UNIQUE,
    source_key             TEXT NOT NULL,
    collection             TEXT NOT NULL,
    datastore_path         TEXT,
    run_id                 TEXT NOT NULL,
    raw_sha256             TEXT NOT NULL,
    locator                TEXT NOT NULL,
    schema_version         TEXT NOT NULL,
    retrieved_timestamp    TEXT NOT NULL,
    evaluation_timestamp   TEXT,
    model_source_id        TEXT NOT NULL,
    model_name             TEXT,
    developer_raw          TEXT,
    config_id              TEXT NOT NULL,
    eval_library           TEXT,
    eval_library_version   TEXT,
    source_type            TEXT,
    evaluator_relationship TEXT,
    samples_sha256         TEXT,
    record                 JSON USING COMPRESSION zstd NOT NULL,
    loaded_at              TIMESTAMP NOT NULL DEFAULT current_timestamp,
    source_evaluation_id   TEXT,
    migrated_from          TEXT,
    eval_library_details   JSON,
    source_metadata        JSON,
    evaluated_by           TEXT,           -- who ran the evaluation (score.evaluated_by)
    original_source        TEXT,           -- what the reporter cites (score.original_source)
    original_source_url    TEXT,
    observed_at            TIMESTAMP,      -- when the record's bytes were retrieved
    migration_steps        TEXT[]          -- a 0.2.x record's migration, the first steps of its scores' chains (NULL: none)
);
INSERT INTO evaluation_v8 SELECT *, NULL, NULL, NULL, NULL, NULL FROM evaluation;
DROP TABLE evaluation;
ALTER TABLE evaluation_v8 RENAME TO evaluation;

-- The scores already loaded, split the same way. A chain is the record's migration steps, then
-- the group's steps (the first of which always names the benchmark), then the value's own step.
CREATE TEMPORARY TABLE _score_v7 AS
SELECT
    s.*,
    CAST(from_json(s.canonical_steps, '["VARCHAR"]') AS VARCHAR[]) AS chain
FROM score s;

CREATE TEMPORARY TABLE _score_v8 AS
SELECT
    *,
    list_position(list_transform(chain, lambda x: starts_with(x, 'benchmark ')), true) AS first_group_step
FROM _score_v7;

UPDATE evaluation e SET
    evaluated_by = s.evaluated_by,
    original_source = s.original_source,
    original_source_url = s.original_source_url,
    observed_at = s.observed_at,
    migration_steps = s.migration_steps
FROM (
    SELECT
        evaluation_id,
        any_value(evaluated_by) AS evaluated_by,
        any_value(original_source) AS original_source,
        any_value(original_source_url) AS original_source_url,
        any_value(observed_at) AS observed_at,
        any_value(CASE WHEN first_group_step > 1 THEN chain[1:first_group_step - 1] END) AS migration_steps
    FROM _score_v8
    GROUP BY evaluation_id
) s
WHERE e.evaluation_id = s.evaluation_id;

INSERT INTO score_group
SELECT DISTINCT
    score_group_id(benchmark_raw, benchmark_id, subset, metric_raw, metric_id, raw_unit, unit, lower_is_better,
                   chain[first_group_step:len(chain) - 1]),
    benchmark_raw, benchmark_id, subset, metric_raw, metric_id, raw_unit, unit, lower_is_better,
    chain[first_group_step:len(chain) - 1]
FROM _score_v8;

INSERT INTO score_setup
SELECT DISTINCT
    score_setup_id(metric_params, coalesce(metric_params_key, ''), setup_key, setup, generation_config),
    metric_params, coalesce(metric_params_key, ''), setup_key, setup, generation_config
FROM _score_v8;

INSERT INTO score_value
SELECT
    score_id, fingerprint, evaluation_id, source_key, result_index, evaluation_result_id,
    score_group_id(benchmark_raw, benchmark_id, subset, metric_raw, metric_id, raw_unit, unit, lower_is_better,
                   chain[first_group_step:len(chain) - 1]),
    score_setup_id(metric_params, coalesce(metric_params_key, ''), setup_key, setup, generation_config),
    raw_value, value, stderr, ci_lower, ci_upper, ci_level, n_samples, uncertainty, llm_scoring, source_row_key
FROM _score_v8;

DROP TABLE _score_v8;
DROP TABLE _score_v7;
DROP TABLE score;
DROP SEQUENCE IF EXISTS score_id_seq;
