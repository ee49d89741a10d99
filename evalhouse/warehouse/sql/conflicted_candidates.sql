-- The candidates of the cells with more than one score row (a superset of the cells with more than
-- one current candidate, the only ones with a conflict to record), for record_conflicts.sql to run
-- scores_canonical over instead of every score. The cells are found on the narrow tables; the
-- scores of their model configurations then go through the same macros the views are made of
-- (scores_current, cell_candidates): a source row key and a cell each name one configuration, so
-- the current rows and candidates of those configurations are exactly the views'.
CREATE OR REPLACE TEMPORARY TABLE _conflicted_scores AS
WITH keyed AS (
    SELECT e.config_id, v.group_id, v.setup_id, count(*) AS n
    FROM score_value v
    JOIN evaluation e USING (evaluation_id)
    GROUP BY ALL
),
cells AS (
    SELECT k.config_id
    FROM keyed k
    JOIN score_group g USING (group_id)
    JOIN score_setup u USING (setup_id)
    GROUP BY k.config_id, g.benchmark_id, g.subset, g.metric_id, u.metric_params_key, u.setup_key
    HAVING sum(k.n) > 1
)
-- only the columns the three macros read (the canonicalisation chain and the rest of a score's
-- columns would be computed for every row and never used)
SELECT score_id, source_key, run_id, config_id, benchmark_id, subset, metric_id, metric_params_key, setup_key,
       value, unit, lower_is_better, evaluated_by, observed_at, source_row_key
FROM score WHERE config_id IN (SELECT config_id FROM cells);

CREATE OR REPLACE TEMPORARY VIEW _conflicted_current AS SELECT * FROM scores_current('_conflicted_scores');

CREATE OR REPLACE TEMPORARY VIEW _conflicted_candidates AS SELECT * FROM cell_candidates('_conflicted_current');
