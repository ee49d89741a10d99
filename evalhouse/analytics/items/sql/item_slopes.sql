-- Per item and training axis: closed-form OLS of p_correct on raw effort over the checkpoints of
-- the improvability suite(s) (paper 003, marginal improvability), two-pass (centred sums) so the
-- numbers do not depend on the engine's summation order beyond rounding.
-- Written once in DuckDB SQL; Spark runs the sqlglot transpilation of this text.
WITH slopes_obs AS (
    SELECT r.item_id, c.axis, c.effort AS x, r.p_correct AS y
    FROM item_response r
    JOIN checkpoint c ON r.checkpoint_id = c.checkpoint_id
    WHERE c.suite IN ({improvability_suites}) AND c.axis IN ('PT', 'SFT', 'RL')
      AND c.effort IS NOT NULL AND r.p_correct IS NOT NULL
),
slopes_m AS (
    SELECT item_id, axis, COUNT(*) AS n, AVG(x) AS mx, AVG(y) AS my
    FROM slopes_obs obs GROUP BY item_id, axis
),
slopes_s AS (
    SELECT o.item_id, o.axis,
           SUM((o.x - m.mx) * (o.x - m.mx)) AS sxx,
           SUM((o.x - m.mx) * (o.y - m.my)) AS sxy,
           SUM((o.y - m.my) * (o.y - m.my)) AS syy
    FROM slopes_obs o JOIN slopes_m m ON o.item_id = m.item_id AND o.axis = m.axis
    GROUP BY o.item_id, o.axis
)
SELECT m.item_id, m.axis, m.n, m.mx, m.my, s.sxx, s.sxy, s.syy,
       s.sxy / NULLIF(s.sxx, 0) AS slope,
       m.my - s.sxy / NULLIF(s.sxx, 0) * m.mx AS intercept,
       CASE WHEN m.n > 2 AND s.sxx > 0
            THEN SQRT(GREATEST(s.syy - s.sxy * s.sxy / s.sxx, 0) / (m.n - 2) / s.sxx) END AS se
FROM slopes_m m JOIN slopes_s s ON m.item_id = s.item_id AND m.axis = s.axis
