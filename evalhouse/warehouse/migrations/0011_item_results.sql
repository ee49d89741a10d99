-- Results of the item-level audit (paper 003), one row per item per analysis_run. The numbers are
-- the estimator's; analysis_run holds its parameters (cost scenario, suites, exclusion bounds).
CREATE TABLE analysis_item (
    analysis_id          TEXT NOT NULL,
    item_id              TEXT NOT NULL,
    benchmark            TEXT NOT NULL,
    domain               TEXT,
    n_responses          BIGINT,
    p_mean               DOUBLE,
    sigma2               DOUBLE,
    z                    DOUBLE,
    margin_mean          DOUBLE,
    slope_pt             DOUBLE,
    slope_sft            DOUBLE,
    slope_rl             DOUBLE,
    se_pt                DOUBLE,
    se_sft               DOUBLE,
    se_rl                DOUBLE,
    cost_pt              DOUBLE,
    cost_sft             DOUBLE,
    cost_rl              DOUBLE,
    cheapest_axis        TEXT,
    marginal_cost        DOUBLE,
    excluded_improvability TEXT,            -- NULL when kept, else the rule that excluded it
    excluded_noise       TEXT,
    excluded             TEXT,              -- the first rule that applies to either, or NULL
    improvability_rank   DOUBLE,
    improvability_rank_lo DOUBLE,
    improvability_rank_hi DOUBLE,
    noise_rank           DOUBLE,
    noise_rank_lo        DOUBLE,
    noise_rank_hi        DOUBLE,
    w_auto               DOUBLE,
    w_aug                DOUBLE,
    quadrant             TEXT,
    v_star               DOUBLE,
    PRIMARY KEY (analysis_id, item_id)
);

-- Paper 003's Table 4 per benchmark: n, p-hat, sigma-hat, Z.
CREATE TABLE analysis_item_benchmark (
    analysis_id     TEXT NOT NULL,
    benchmark       TEXT NOT NULL,
    n_items         BIGINT,
    n_noise_items   BIGINT,
    p_hat           DOUBLE,
    sigma_hat       DOUBLE,
    z               DOUBLE,
    cheapest_pt     DOUBLE,                 -- share of kept items whose cheapest axis is PT
    cheapest_sft    DOUBLE,
    cheapest_rl     DOUBLE,
    PRIMARY KEY (analysis_id, benchmark)
);
