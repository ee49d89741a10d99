-- The cells of two snapshots that differ. A cell is model configuration x benchmark x subset x
-- metric x metric parameters x setup: one row of v_scores_canonical, i.e. the value analyses read
-- after the conflict policy, taken from each snapshot's frozen copy of the view (so the diff does
-- not depend on the view SQL of the evalhouse that runs it); snap_a/snap_b hold only the files
-- the two snapshots do not share byte for byte. A shared cell changed when its canonical value,
-- unit or direction differs at all: paper 004's "exactly unchanged" is an exact comparison. Only
-- added, removed and changed cells are kept, so the table is as large as the change.
CREATE OR REPLACE TEMP TABLE cell_diff AS
WITH a AS (
    SELECT config_id, benchmark_id, subset_key, metric_id, metric_params_key, setup_key, value, unit, lower_is_better,
           true AS present
    FROM snap_a.v_scores_canonical
),
b AS (
    SELECT config_id, benchmark_id, subset_key, metric_id, metric_params_key, setup_key, value, unit, lower_is_better,
           true AS present
    FROM snap_b.v_scores_canonical
),
joined AS (
    SELECT
        config_id,
        benchmark_id,
        subset_key,
        metric_id,
        metric_params_key,
        setup_key,
        CASE
            WHEN a.present IS NULL THEN 'added'
            WHEN b.present IS NULL THEN 'removed'
            WHEN a.value IS DISTINCT FROM b.value
              OR a.unit IS DISTINCT FROM b.unit
              OR a.lower_is_better IS DISTINCT FROM b.lower_is_better THEN 'changed'
            ELSE 'unchanged'
        END AS status,
        a.value AS old_value,
        b.value AS new_value,
        a.unit AS old_unit,
        b.unit AS new_unit
    FROM a
    FULL OUTER JOIN b USING (config_id, benchmark_id, subset_key, metric_id, metric_params_key, setup_key)
)
SELECT * FROM joined WHERE status <> 'unchanged';
