-- Whether the run can have superseded anything: another run's score has the source of one of the
-- run's scores (a source's first load supersedes nothing). A scan of two narrow columns, where
-- record_supersessions.sql joins whole score rows (~20 ms even when it finds no pair).
-- Parameter $1: the run id.
SELECT EXISTS (
    SELECT 1 FROM score_value v
    WHERE v.source_key IN (
        SELECT f.source_key FROM score_value f JOIN evaluation e USING (evaluation_id) WHERE e.run_id = $1
    )
      AND v.evaluation_id NOT IN (SELECT evaluation_id FROM evaluation WHERE run_id = $1)
)
