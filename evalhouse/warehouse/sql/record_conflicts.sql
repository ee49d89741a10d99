-- Write one curation_decision per multi-candidate cell whose resolution is new or has changed
-- (different policy, candidate set or value), so the decision log stays a log of decisions
-- rather than a copy of the view on every run. A decision is credited to the run that caused it:
-- the run that loaded the cell's most recently loaded candidate (v_scores_canonical.rule_run_id);
-- $1, the run recording the decisions, only when no candidate names its run.
-- Only cells with more than one candidate can have a conflict, and a cell's canonical row depends
-- on its own candidates alone: the candidates of those cells are set apart first
-- (conflicted_candidates.sql, run before this) and
-- scores_canonical (the macro v_scores_canonical is made of) runs over them only, instead of
-- ranking every score of the warehouse (10 s at 10^6 scores, most of them alone in their cell).
INSERT INTO curation_decision (kind, rule, subject, detail, run_id)
SELECT
    'conflict_resolution',
    'policy ' || sc.policy || '; decided by ' || sc.decided_by,
    json_object('cell_id', sc.cell_id, 'config_id', sc.config_id, 'benchmark_id', sc.benchmark_id,
                'subset', sc.subset, 'metric_id', sc.metric_id, 'metric_params_key', sc.metric_params_key,
                'setup_key', sc.setup_key),
    json_object('signature', sig.signature, 'value', sc.value, 'n_used', sc.n_used,
                'n_candidates', sc.n_candidates, 'score_ids', sc.score_ids, 'sources', sc.sources,
                'evaluated_by', sc.evaluated_by, 'spread', sc.spread, 'disagreement', sc.disagreement,
                'decided_by', sc.decided_by, 'decision', sc.decision, 'candidate_sources', sc.candidate_sources),
    coalesce(sc.rule_run_id, $1)
FROM scores_canonical('_conflicted_candidates') sc
CROSS JOIN LATERAL (
    SELECT md5(sc.policy || '|' || sc.score_ids::VARCHAR || '|' || round(sc.value, 12)::VARCHAR) AS signature
) sig
WHERE sc.n_candidates > 1
  AND NOT EXISTS (
      SELECT 1 FROM curation_decision d
      WHERE d.kind = 'conflict_resolution'
        AND json_extract_string(d.subject, '$.cell_id') = sc.cell_id
        AND json_extract_string(d.detail, '$.signature') = sig.signature
  );
