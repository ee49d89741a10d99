-- Per item: seed variance over the noise suite(s) (paper 003, performance variance),
-- sigma2 = 1 / (N - |PP|) * sum over checkpoints m and seeds s of (p_ims - pbar_im)^2, with N the
-- item's responses and |PP| its checkpoints; Z = sigma / sqrt(p(1 - p)).
WITH noise_obs AS (
    SELECT r.item_id, c.suite || '/' || c.checkpoint AS ckpt, r.p_correct AS y
    FROM item_response r
    JOIN checkpoint c ON r.checkpoint_id = c.checkpoint_id
    WHERE c.suite IN ({noise_suites}) AND r.p_correct IS NOT NULL
),
noise_cm AS (
    SELECT item_id, ckpt, COUNT(*) AS n, AVG(y) AS my FROM noise_obs obs GROUP BY item_id, ckpt
),
noise_dev AS (
    SELECT o.item_id, SUM((o.y - cm.my) * (o.y - cm.my)) AS ss
    FROM noise_obs o JOIN noise_cm cm ON o.item_id = cm.item_id AND o.ckpt = cm.ckpt
    GROUP BY o.item_id
),
noise_agg AS (
    SELECT item_id, SUM(n) AS n_obs, COUNT(*) AS n_ckpt, SUM(n * my) / SUM(n) AS p_hat
    FROM noise_cm cm GROUP BY item_id
)
SELECT a.item_id, a.n_obs, a.n_ckpt, a.p_hat,
       CASE WHEN a.n_obs > a.n_ckpt THEN d.ss / (a.n_obs - a.n_ckpt) END AS sigma2,
       CASE WHEN a.n_obs > a.n_ckpt AND a.p_hat > 0 AND a.p_hat < 1
            THEN SQRT(d.ss / (a.n_obs - a.n_ckpt)) / SQRT(a.p_hat * (1 - a.p_hat)) END AS z
FROM noise_agg a JOIN noise_dev d ON a.item_id = d.item_id
