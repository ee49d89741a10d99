-- Fragment (the CTE `current_scores` of the frames that count current scores): the current score
-- of every source row as v_score_current defines it, except that the run being validated
-- ($run_id) counts as the newest. The checkpoint runs inside the load, before that run's
-- ingest_run row exists, and asks what will be current once the load commits; with $run_id NULL
-- (an on-demand validation) this is exactly v_score_current.
SELECT s.score_id, s.config_id, s.benchmark_id
FROM score s
LEFT JOIN ingest_run r ON r.run_id = s.run_id
QUALIFY row_number() OVER (
    PARTITION BY s.source_row_key
    ORDER BY (s.run_id IS NOT DISTINCT FROM $run_id) DESC, r.started_at DESC NULLS LAST, s.score_id DESC
) = 1
