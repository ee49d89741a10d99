-- One curation_decision per row this run superseded: the same source reported the same cell
-- (score.source_row_key) again from a later fetch. Parameter $1: the run id.
INSERT INTO curation_decision (kind, rule, subject, detail, run_id)
SELECT
    'supersession',
    'same cell from the same source on a later fetch: the newer row is current, the older stays as history',
    json_object('source_row_key', new.source_row_key, 'score_id', new.score_id, 'superseded_score_id', old.score_id),
    json_object('source_key', new.source_key, 'config_id', new.config_id, 'benchmark_id', new.benchmark_id,
                'subset', new.subset, 'metric_id', new.metric_id, 'setup_key', new.setup_key,
                'old_value', old.value, 'new_value', new.value, 'old_run_id', old.run_id,
                'old_observed_at', old.observed_at, 'new_observed_at', new.observed_at),
    $1
FROM score new
JOIN score old
  ON old.source_row_key = new.source_row_key
 AND old.run_id <> new.run_id
 AND coalesce(old.observed_at, TIMESTAMP '1970-01-01') <= coalesce(new.observed_at, TIMESTAMP '1970-01-01')
WHERE new.run_id = $1;
