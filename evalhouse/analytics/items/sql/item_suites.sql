-- Suites with what they hold: axes with effort, and seeds per checkpoint (to pick defaults).
SELECT suite,
       COUNT(DISTINCT CASE WHEN axis IN ('PT', 'SFT', 'RL') AND effort IS NOT NULL THEN axis END) AS n_axes,
       COUNT(DISTINCT seed) AS n_seeds,
       COUNT(DISTINCT checkpoint) AS n_checkpoints
FROM checkpoint
WHERE checkpoint_id IN (SELECT DISTINCT checkpoint_id FROM item_response)
GROUP BY suite
ORDER BY suite
