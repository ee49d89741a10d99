-- The current value of every source row. When a later run of a source reports the same row again
-- with a different value (a leaderboard correction), the newer row supersedes the older one; the
-- older stays in `score` as history. A source row is identified by what it measured and whom it
-- cites (score.source_row_key), never by the fetch time.
CREATE OR REPLACE VIEW v_score_current AS
SELECT s.*
FROM score s
LEFT JOIN ingest_run r ON r.run_id = s.run_id
QUALIFY row_number() OVER (
    PARTITION BY s.source_row_key ORDER BY r.started_at DESC NULLS LAST, s.score_id DESC
) = 1;
