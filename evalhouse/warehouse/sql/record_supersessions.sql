-- One curation_decision per row this run superseded: the same source reported the same cell
-- (score.source_row_key) again from a later fetch. Parameter $1: the run id.
-- The pairs are found on the narrow tables first (the run's rows, then earlier rows of the same
-- source with one of their keys: a key names its source), and only the pairs read whole rows; a
-- load of 10^5 new rows then costs a scan of one column, not two joins of every score.
INSERT INTO curation_decision (kind, rule, subject, detail, run_id)
WITH fresh AS (
    SELECT v.score_id, v.source_row_key, v.source_key
    FROM score_value v JOIN evaluation e USING (evaluation_id)
    WHERE e.run_id = $1
),
pairs AS (
    SELECT f.score_id AS new_id, v.score_id AS old_id
    FROM fresh f
    JOIN score_value v ON v.source_key = f.source_key AND v.source_row_key = f.source_row_key
    JOIN evaluation e ON e.evaluation_id = v.evaluation_id
    WHERE e.run_id <> $1
)
SELECT
    'supersession',
    'same cell from the same source on a later fetch: the newer row is current, the older stays as history',
    json_object('source_row_key', new.source_row_key, 'score_id', new.score_id, 'superseded_score_id', old.score_id),
    json_object('source_key', new.source_key, 'config_id', new.config_id, 'benchmark_id', new.benchmark_id,
                'subset', new.subset, 'metric_id', new.metric_id, 'setup_key', new.setup_key,
                'old_value', old.value, 'new_value', new.value, 'old_run_id', old.run_id,
                'old_observed_at', old.observed_at, 'new_observed_at', new.observed_at),
    $1
FROM pairs p
JOIN score new ON new.score_id = p.new_id
JOIN score old ON old.score_id = p.old_id
WHERE coalesce(old.observed_at, TIMESTAMP '1970-01-01') <= coalesce(new.observed_at, TIMESTAMP '1970-01-01');
