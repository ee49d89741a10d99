-- depends: score
-- The current value of every source row. When a later fetch of a source reports the same row again
-- (same configuration, benchmark, subset, metric, parameters and setup — score.source_row_key), the
-- newer row supersedes the older; the older stays in `score` as history, and every supersession is a
-- curation_decision. Rows of one fetch that claim the same cell are all current: they are
-- candidates the conflict policy chooses between, not one another's correction.
-- The view is the table macro scores_current over every score; over the scores of some model
-- configurations it gives the view's rows for them (a source row key names its configuration).
CREATE OR REPLACE MACRO scores_current(scores) AS TABLE
SELECT s.*
FROM query_table(scores) s
LEFT JOIN ingest_run r ON r.run_id = s.run_id
QUALIFY rank() OVER (
    PARTITION BY s.source_row_key
    ORDER BY coalesce(s.observed_at, r.started_at) DESC NULLS LAST, r.started_at DESC NULLS LAST
) = 1;

CREATE OR REPLACE VIEW v_score_current AS SELECT * FROM scores_current('score');
