-- The observations the bootstraps resample: (item, axis, effort, p) on the improvability suite(s)
-- and (item, checkpoint, seed, p) on the noise suite(s).
SELECT r.item_id, c.axis, c.effort AS x, r.p_correct AS y
FROM item_response r
JOIN checkpoint c ON r.checkpoint_id = c.checkpoint_id
WHERE c.suite IN ({improvability_suites}) AND c.axis IN ('PT', 'SFT', 'RL')
  AND c.effort IS NOT NULL AND r.p_correct IS NOT NULL
