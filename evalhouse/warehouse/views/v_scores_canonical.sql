-- depends: v_cell_candidates
-- One value per cell (model configuration x benchmark x subset x metric x metric parameters x the
-- defining part of the setup) under the conflict policy in curation_setting('conflict_policy').
-- The candidates of a cell are put in one total order and the first is used:
--   1. the policy: the rows it allows before the rows it sets aside
--        prefer-independent  (default) rows not reported by the model's developer (the developer's
--                            own only when there is nothing else)
--        prefer-first-party  the developer's rows when there are any
--        prefer-tier         rows of the best (lowest) source tier
--        latest              every row, the most recently observed first
--        mean                every row, averaged (paper 002's rule) — the only policy that averages,
--                            and only when a person sets it; rounded to 12 decimals
--   2. the source tier, best first;
--   3. who ran it (v_cell_candidates.evaluator_rank): a third party that ran it itself, then the
--      benchmark's creators, the community, an unnamed runner, the model's developer;
--   4. the observation date (the day the row's bytes were fetched), latest first;
--   5. a tiebreak: the lowest score id (a content hash: the same on every reload, meaning nothing).
-- `decided_by` names the first of these on which the used row and the next one differ ('only' when
-- there is one candidate, 'mean' under the mean policy) and `decision` says it in words, with the
-- values compared; `rule_run_id` is the run that loaded the cell's most recently loaded candidate
-- (the run whose load made the choice this one). Every other candidate stays visible:
-- n_candidates, candidate_sources, spread and disagreement say what the choice was made between
-- (`evalhouse conflicts`, `evalhouse audit score`). `value` keeps the canonical unit and direction;
-- `value_hib` is oriented so that higher is better (bounded lower-is-better metrics are reflected
-- inside their bounds, unbounded ones negated) and `orientation` says which was done. `spread` is
-- the range of all candidates on the metric's normalised scale and `disagreement` flags it beyond
-- the tolerance in curation_setting('disagreement_tolerance').
-- The view is the table macro scores_canonical over every candidate; a cell's row depends only on
-- its own candidates, so the macro over a subset of cells (record_conflicts.sql: the cells with
-- more than one candidate) gives exactly the view's rows for those cells.
CREATE OR REPLACE MACRO scores_canonical(candidates) AS TABLE
WITH settings AS (
    SELECT
        (SELECT value FROM curation_setting WHERE key = 'conflict_policy') AS policy,
        (SELECT CAST(value AS DOUBLE) FROM curation_setting WHERE key = 'disagreement_tolerance') AS tolerance
),
ranked AS (
    SELECT
        cc.*,
        settings.policy,
        settings.tolerance,
        count(*) OVER cell AS n_candidates,
        min(cc.source_tier) OVER cell AS best_tier,
        bool_or(cc.developer_reported) OVER cell AS any_developer,
        bool_or(NOT cc.developer_reported) OVER cell AS any_independent,
        max(cc.value) OVER cell - min(cc.value) OVER cell AS raw_spread,
        list_sort(list(DISTINCT cc.source_key) OVER cell) AS candidate_sources,
        arg_max(cc.run_id, cc.run_started_at) OVER cell AS rule_run_id
    FROM query_table(candidates) cc, settings
    WINDOW cell AS (PARTITION BY cc.cell_id)
),
eligible AS (
    SELECT
        ranked.*,
        CASE policy
            WHEN 'prefer-tier' THEN source_tier = best_tier
            WHEN 'prefer-first-party' THEN developer_reported OR NOT any_developer
            WHEN 'prefer-independent' THEN NOT developer_reported OR NOT any_independent
            ELSE true
        END AS eligible,
        CAST(coalesce(observed_at, run_started_at) AS VARCHAR) AS observed_text
    FROM ranked
),
ordered AS (
    SELECT
        eligible.*,
        row_number() OVER place AS place,
        lead(eligible) OVER place AS next_eligible,
        lead(source_tier) OVER place AS next_tier,
        lead(evaluator_rank) OVER place AS next_evaluator_rank,
        lead(evaluated_by) OVER place AS next_evaluated_by,
        lead(observed_on) OVER place AS next_observed_on,
        lead(observed_text) OVER place AS next_observed_text
    FROM eligible
    WINDOW place AS (
        PARTITION BY cell_id
        ORDER BY eligible DESC,
                 CASE WHEN policy = 'latest' THEN observed_text END DESC NULLS LAST,
                 source_tier, evaluator_rank, observed_on DESC NULLS LAST, score_id
    )
),
chosen AS (
    SELECT
        ordered.*,
        CASE
            WHEN policy = 'mean' THEN 'mean'
            WHEN next_eligible IS NULL THEN 'only'
            WHEN eligible AND NOT next_eligible THEN 'policy'
            WHEN policy = 'latest' AND observed_text IS DISTINCT FROM next_observed_text THEN 'observation date'
            WHEN source_tier <> next_tier THEN 'tier'
            WHEN evaluator_rank <> next_evaluator_rank THEN 'who ran it'
            WHEN observed_on IS DISTINCT FROM next_observed_on THEN 'observation date'
            ELSE 'tiebreak'
        END AS decided_by
    FROM ordered
    WHERE eligible AND (policy = 'mean' OR place = 1)
)
SELECT
    cell_id,
    config_id,
    benchmark_id,
    any_value(subset) AS subset,
    subset_key,
    metric_id,
    metric_params_key,
    setup_key,
    round(avg(value), 12) AS value,
    any_value(unit) AS unit,
    any_value(lower_is_better) AS lower_is_better,
    round(CASE
        WHEN NOT any_value(lower_is_better) THEN avg(value)
        WHEN any_value(metric_min) IS NOT NULL AND any_value(metric_max) IS NOT NULL
            THEN any_value(metric_min) + any_value(metric_max) - avg(value)
        ELSE -avg(value)
    END, 12) AS value_hib,
    CASE
        WHEN NOT any_value(lower_is_better) THEN 'as-is'
        WHEN any_value(metric_min) IS NOT NULL AND any_value(metric_max) IS NOT NULL THEN 'reflected'
        ELSE 'negated'
    END AS orientation,
    count(*) AS n_used,
    any_value(n_candidates) AS n_candidates,
    any_value(policy) AS policy,
    list(score_id ORDER BY score_id) AS score_ids,
    list(DISTINCT source_key ORDER BY source_key) AS sources,
    list(DISTINCT evaluated_by ORDER BY evaluated_by) AS evaluated_by,
    CASE
        WHEN any_value(metric_min) IS NOT NULL AND any_value(metric_max) IS NOT NULL
             AND any_value(metric_max) > any_value(metric_min)
            THEN any_value(raw_spread) / (any_value(metric_max) - any_value(metric_min))
    END AS spread,
    coalesce(
        any_value(raw_spread) / nullif(any_value(metric_max) - any_value(metric_min), 0) > any_value(tolerance),
        false
    ) AS disagreement,
    any_value(candidate_sources) AS candidate_sources,
    len(any_value(candidate_sources)) AS n_sources,
    any_value(decided_by) AS decided_by,
    CASE any_value(decided_by)
        WHEN 'mean' THEN 'the mean of all ' || any_value(n_candidates) || ' candidates (policy mean, set by a person)'
        WHEN 'only' THEN 'the only candidate'
        WHEN 'policy' THEN CASE any_value(policy)
            WHEN 'prefer-independent' THEN 'policy prefer-independent: an independent row before the developer''s own'
            WHEN 'prefer-first-party' THEN 'policy prefer-first-party: the developer''s own row before the others'
            WHEN 'prefer-tier' THEN 'policy prefer-tier: only rows of the best source tier ('
                                    || any_value(best_tier) || ') are used'
            ELSE 'policy ' || any_value(policy)
        END
        WHEN 'tier' THEN 'source tier ' || any_value(source_tier) || ' before tier ' || any_value(next_tier)
        WHEN 'who ran it' THEN 'who ran it: ' || coalesce(any_value(evaluated_by), 'unknown') || ' before '
                               || coalesce(any_value(next_evaluated_by), 'unknown')
        WHEN 'observation date' THEN 'observation date: ' || coalesce(
            CASE WHEN any_value(policy) = 'latest' THEN any_value(observed_text) ELSE CAST(any_value(observed_on) AS VARCHAR) END,
            'unknown') || ' before ' || coalesce(
            CASE WHEN any_value(policy) = 'latest' THEN any_value(next_observed_text)
                 ELSE CAST(any_value(next_observed_on) AS VARCHAR) END, 'unknown')
        ELSE 'tiebreak: equal on policy ' || any_value(policy) || ', source tier ' || any_value(source_tier)
             || ', who ran it (' || coalesce(any_value(evaluated_by), 'unknown') || ') and observation date ('
             || coalesce(CAST(any_value(observed_on) AS VARCHAR), 'unknown')
             || '); the lowest score id was used (a content hash: the same on every reload, meaning nothing)'
    END AS decision,
    any_value(rule_run_id) AS rule_run_id
FROM chosen
GROUP BY cell_id, config_id, benchmark_id, subset_key, metric_id, metric_params_key, setup_key;

CREATE OR REPLACE VIEW v_scores_canonical AS SELECT * FROM scores_canonical('v_cell_candidates');
