SELECT r.item_id, c.suite || '/' || c.checkpoint AS ckpt, c.seed, r.p_correct AS y
FROM item_response r
JOIN checkpoint c ON r.checkpoint_id = c.checkpoint_id
WHERE c.suite IN ({noise_suites}) AND r.p_correct IS NOT NULL
