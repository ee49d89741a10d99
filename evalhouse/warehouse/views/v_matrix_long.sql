-- depends: v_scores_canonical, v_benchmark_metric, v_benchmark_setup
-- Analysis input, long form: one higher-is-better value per model configuration x benchmark, on the
-- benchmark's canonical metric, whole benchmark only (no subset). Nothing is averaged here: each
-- row is one canonical cell. Which cell, when a model has several setups of one benchmark (5-shot
-- and 8-shot GSM8K, its own agent scaffold on OSWorld):
--   1. the benchmark's canonical setup (v_benchmark_setup) when the model has it;
--   2. else the model's cell on the setup that covers the most models, then the most cells, then
--      the shortest key (a fixed, documented choice — never a mean of setups).
-- `canonical_setup` says which rule chose the row, so an analysis that needs one setup throughout
-- filters on it. Benchmark versions stay separate benchmarks; join across a family only on purpose
-- (v_scores_by_family).
CREATE OR REPLACE VIEW v_matrix_long AS
WITH setups AS (
    SELECT benchmark_id, metric_id, metric_params_key, setup_key,
           count(DISTINCT config_id) AS n_models, count(*) AS n_cells
    FROM v_scores_canonical
    WHERE subset_key = ''
    GROUP BY ALL
),
chosen AS (
    SELECT sc.*, bs.benchmark_id IS NOT NULL AS canonical_setup
    FROM v_scores_canonical sc
    JOIN v_benchmark_metric bm USING (benchmark_id, metric_id)
    JOIN setups st USING (benchmark_id, metric_id, metric_params_key, setup_key)
    LEFT JOIN v_benchmark_setup bs USING (benchmark_id, metric_id, metric_params_key, setup_key)
    WHERE sc.subset_key = ''
    QUALIFY row_number() OVER (
        PARTITION BY sc.config_id, sc.benchmark_id
        ORDER BY bs.benchmark_id IS NOT NULL DESC, st.n_models DESC, st.n_cells DESC,
                 length(sc.metric_params_key) + length(sc.setup_key), sc.metric_params_key, sc.setup_key
    ) = 1
)
SELECT
    c.config_id,
    mc.base_model_id,
    b.family_id,
    mc.name AS config_name,
    c.benchmark_id,
    c.metric_id,
    c.value_hib AS value,
    c.value AS value_canonical,
    c.unit,
    c.orientation,
    c.setup_key,
    c.metric_params_key,
    c.canonical_setup,
    c.sources,
    c.disagreement
FROM chosen c
JOIN model_config mc ON mc.config_id = c.config_id
JOIN base_model b ON b.base_model_id = mc.base_model_id;
