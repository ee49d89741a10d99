-- The per-item audit: slopes per axis side by side, marginal cost c_k = kappa_k / beta_k (only
-- for beta_k > 0), the cheapest axis (ties: SFT, then RL, then PT), and the exclusion rules by
-- name. The three primitive queries (slopes, noise, overview) are filled in as CTEs; the kappa values the cost
-- scenario; the bounds are parameters. The slope rule is a choice (``literal_negative``): FALSE drops an item
-- only when no axis has a positive slope (no cost can be computed); TRUE is paper 003's "beta_ik < 0" read
-- literally: any negative slope drops the item.
WITH slopes AS ({slopes}),
noise AS ({noise}),
overview AS ({overview}),
wide AS (
    SELECT item_id,
           MAX(CASE WHEN axis = 'PT' THEN slope END) AS slope_pt,
           MAX(CASE WHEN axis = 'SFT' THEN slope END) AS slope_sft,
           MAX(CASE WHEN axis = 'RL' THEN slope END) AS slope_rl,
           MAX(CASE WHEN axis = 'PT' THEN se END) AS se_pt,
           MAX(CASE WHEN axis = 'SFT' THEN se END) AS se_sft,
           MAX(CASE WHEN axis = 'RL' THEN se END) AS se_rl,
           MAX(CASE WHEN axis = 'PT' THEN n END) AS n_pt,
           MAX(CASE WHEN axis = 'SFT' THEN n END) AS n_sft,
           MAX(CASE WHEN axis = 'RL' THEN n END) AS n_rl,
           SUM(my * n) / SUM(n) AS p_improvability
    FROM slopes GROUP BY item_id
),
costs AS (
    SELECT w.*,
           CASE WHEN slope_pt > 0 THEN {kappa_pt} / slope_pt END AS cost_pt,
           CASE WHEN slope_sft > 0 THEN {kappa_sft} / slope_sft END AS cost_sft,
           CASE WHEN slope_rl > 0 THEN {kappa_rl} / slope_rl END AS cost_rl
    FROM wide w
),
cheapest AS (
    SELECT c.*, LEAST(cost_pt, cost_sft, cost_rl) AS marginal_cost FROM costs c
)
SELECT o.item_id, o.benchmark, o.domain, o.n_responses, o.p_mean, o.margin_mean, o.margin_median,
       n.n_obs AS n_noise, n.n_ckpt AS n_noise_checkpoints, n.p_hat, n.sigma2, n.z,
       c.slope_pt, c.slope_sft, c.slope_rl, c.se_pt, c.se_sft, c.se_rl, c.n_pt, c.n_sft, c.n_rl,
       c.cost_pt, c.cost_sft, c.cost_rl, c.marginal_cost, c.p_improvability,
       CASE WHEN c.marginal_cost IS NULL THEN NULL
            WHEN c.cost_sft = c.marginal_cost THEN 'SFT'
            WHEN c.cost_rl = c.marginal_cost THEN 'RL'
            ELSE 'PT' END AS cheapest_axis,
       CASE WHEN c.item_id IS NULL THEN 'no improvability checkpoints'
            WHEN c.p_improvability < {p_lo_improvability} OR c.p_improvability > {p_hi_improvability}
                THEN 'improvability: p outside [{p_lo_improvability}, {p_hi_improvability}]'
            WHEN {literal_negative} AND LEAST(c.slope_pt, c.slope_sft, c.slope_rl) < 0
                THEN 'improvability: a negative slope on some axis'
            WHEN c.marginal_cost IS NULL THEN 'improvability: no axis with a positive slope'
       END AS excluded_improvability,
       CASE WHEN n.item_id IS NULL OR n.sigma2 IS NULL THEN 'no seed panel'
            WHEN n.p_hat < {p_lo_noise} OR n.p_hat > {p_hi_noise}
                THEN 'noise: p outside [{p_lo_noise}, {p_hi_noise}]'
            WHEN n.sigma2 < {min_sigma2} THEN 'noise: sigma2 below {min_sigma2}'
       END AS excluded_noise
FROM overview o
LEFT JOIN cheapest c ON c.item_id = o.item_id
LEFT JOIN noise n ON n.item_id = o.item_id
