-- Item audit results (paper 003), extended: the per-item margin as the paper's median, the weights
-- of Eq. 1 beside the diagonal rule with the reason an item gets none, and Table 4's margin columns.
-- Table 4's p_hat, sigma_hat and z are medians from this version on (the diagnostics in
-- analysis_run.record say table4_statistic = median); rows of older runs hold means.
ALTER TABLE analysis_item ADD COLUMN margin_median DOUBLE;
ALTER TABLE analysis_item ADD COLUMN v_star_diagonal DOUBLE;   -- M_ii w_i / (M_ii + r sigma2_i), for comparison
ALTER TABLE analysis_item ADD COLUMN v_star_reason TEXT;       -- NULL when weighted, else why v = 0

ALTER TABLE analysis_item_benchmark ADD COLUMN n_won BIGINT;    -- kept items with a margin (correct responses)
ALTER TABLE analysis_item_benchmark ADD COLUMN margin DOUBLE;   -- median of the items' median margins
ALTER TABLE analysis_item_benchmark ADD COLUMN r_margin_z DOUBLE;  -- Pearson r(margin, Z) over those items
