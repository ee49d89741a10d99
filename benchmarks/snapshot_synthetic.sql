-- Synthetic warehouse content for benchmarks/snapshot.py, inserted straight into the tables
-- (the EEE loader would take minutes for 10^6 scores and is measured by import_eee.py).
-- Parameters: $n_scores. Shape: 1,000 model configurations x 100 benchmarks x (n/100,000) setups;
-- each benchmark is reported by one of 10 sources, so score_value has 10 partitions.
INSERT INTO source (source_key, name, kind, tier)
SELECT 'synth-' || s, 'Synthetic source ' || s, 'leaderboard', 1 + s % 4 FROM range(10) t(s);

INSERT INTO ingest_run (run_id, source_key, trigger, started_at, finished_at, status, registry_version)
SELECT 'synth-' || s || '@run', 'synth-' || s, 'benchmark', TIMESTAMP '2026-01-01' + INTERVAL (s) HOUR,
       TIMESTAMP '2026-01-01' + INTERVAL (s) HOUR, 'completed', 'synthetic'
FROM range(10) t(s);

INSERT INTO model_family (family_id, name) SELECT 'fam' || f, 'Family ' || f FROM range(100) t(f);
INSERT INTO base_model (base_model_id, name, family_id) SELECT 'bm' || c, 'Model ' || c, 'fam' || (c % 100) FROM range(1000) t(c);
INSERT INTO model_config (config_id, base_model_id, name) SELECT 'm' || c, 'bm' || c, 'Model ' || c FROM range(1000) t(c);

INSERT INTO metric (metric_id, kind, unit, min_value, max_value, lower_is_better, registry_version)
VALUES ('synth_accuracy', 'accuracy', 'proportion', 0, 1, false, 'synthetic');
INSERT INTO benchmark (benchmark_id, display_name, registry_version)
SELECT 'synth.b' || b, 'Benchmark ' || b, 'synthetic' FROM range(100) t(b);

-- one evaluation record per model configuration and source
INSERT INTO evaluation (evaluation_id, fingerprint, source_key, collection, datastore_path, run_id, raw_sha256,
                        locator, schema_version, retrieved_timestamp, model_source_id, config_id, record,
                        evaluated_by, observed_at)
SELECT
    'synth-' || s || '/m' || c,
    md5('eval' || s || '/' || c) || md5('eval2' || s || '/' || c),
    'synth-' || s,
    'synth-' || s,
    'data/synth-' || s || '/org/m' || c || '/' || md5('uuid' || s || '/' || c)::UUID || '.json',
    'synth-' || s || '@run',
    md5('raw' || s),
    'synthetic',
    '0.3.0',
    '1750000000',
    'org/m' || c,
    'm' || c,
    json_object('schema_version', '0.3.0', 'evaluation_id', 'synth-' || s || '/m' || c,
                'model_info', json_object('id', 'org/m' || c, 'name', 'm' || c)),
    CASE WHEN s = 0 THEN 'model_developer' ELSE 'independent_evaluator' END,
    TIMESTAMP '2026-01-01' + INTERVAL (s) HOUR
FROM range(10) ts(s), range(1000) tc(c);

-- one canonical group per benchmark, one setup per shot count (ids from their content, as a load does)
INSERT INTO score_group
SELECT score_group_id('Benchmark ' || b, 'synth.b' || b, NULL, 'synth_accuracy', 'synth_accuracy', 'proportion',
                      'proportion', false, ['benchmark ' || b]),
       'Benchmark ' || b, 'synth.b' || b, NULL, 'synth_accuracy', 'synth_accuracy', 'proportion', 'proportion',
       false, ['benchmark ' || b]
FROM range(100) t(b);

INSERT INTO score_setup
SELECT score_setup_id(NULL, '', setup_key, NULL, NULL), NULL, '', setup_key, NULL, NULL
FROM (SELECT CASE WHEN k = 0 THEN '' ELSE 'shots=' || k END AS setup_key FROM range($n_scores // 100000 + 1) t(k));

INSERT INTO score_value (score_id, fingerprint, evaluation_id, source_key, result_index, group_id, setup_id,
                         raw_value, value, source_row_key)
SELECT
    CAST(CAST('0x' || left(fp, 16) AS UBIGINT) & 4611686018427387903 AS BIGINT),
    fp,
    'synth-' || (b % 10) || '/m' || c,
    'synth-' || (b % 10),
    b,
    score_group_id('Benchmark ' || b, 'synth.b' || b, NULL, 'synth_accuracy', 'synth_accuracy', 'proportion',
                   'proportion', false, ['benchmark ' || b]),
    score_setup_id(NULL, '', CASE WHEN k = 0 THEN '' ELSE 'shots=' || k END, NULL, NULL),
    v,
    v,
    md5('row' || i)
FROM (
    SELECT i, i % 1000 AS c, (i // 1000) % 100 AS b, i // 100000 AS k, (hash(i) % 1000000) / 1e6 AS v,
           md5('score' || i) || md5('score2' || i) AS fp
    FROM range($n_scores) t(i)
);
