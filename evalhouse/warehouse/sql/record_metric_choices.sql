-- Record the canonical metric chosen for each benchmark (paper 002 C.8) when it is new or changed.
-- Parameter $1: the run id.
INSERT INTO curation_decision (kind, rule, subject, detail, run_id)
SELECT
    'canonical_metric',
    bm.rule,
    json_object('benchmark_id', bm.benchmark_id),
    json_object('metric_id', bm.metric_id, 'n_models', bm.n_models, 'n_rows', bm.n_rows,
                'candidates', bm.candidates),
    $1
FROM v_benchmark_metric bm
WHERE NOT EXISTS (
    SELECT 1 FROM (
        SELECT subject, detail, row_number() OVER (
            PARTITION BY json_extract_string(subject, '$.benchmark_id') ORDER BY decision_id DESC) AS rn
        FROM curation_decision WHERE kind = 'canonical_metric'
    ) last
    WHERE last.rn = 1
      AND json_extract_string(last.subject, '$.benchmark_id') = bm.benchmark_id
      AND json_extract_string(last.detail, '$.metric_id') = bm.metric_id
);
