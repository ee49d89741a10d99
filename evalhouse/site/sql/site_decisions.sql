-- The curation decisions an audit chain lists ('evalhouse audit score' shows them per score):
-- by what they are about. `about` is 'fingerprint' (an exact-duplicate skip of an evaluation
-- record), 'score' (a supersession made or suffered), 'cell' (a conflict resolution),
-- 'benchmark' (a provisional benchmark, a canonical-metric choice) or 'metric' (a provisional
-- metric); `subject_key` is the fingerprint, score id, cell id, benchmark id or metric id.
SELECT about, subject_key, decision_id, kind, rule, run_id, created_at
FROM (
    SELECT 'fingerprint' AS about, json_extract_string(subject, '$.fingerprint') AS subject_key, *
    FROM curation_decision WHERE kind = 'exact_duplicate'
    UNION ALL
    SELECT 'score', json_extract_string(subject, '$.score_id'), * FROM curation_decision WHERE kind = 'supersession'
    UNION ALL
    SELECT 'score', json_extract_string(subject, '$.superseded_score_id'), *
    FROM curation_decision WHERE kind = 'supersession'
    UNION ALL
    SELECT 'cell', json_extract_string(subject, '$.cell_id'), * FROM curation_decision WHERE kind = 'conflict_resolution'
    UNION ALL
    SELECT 'benchmark', json_extract_string(subject, '$.id'), * FROM curation_decision WHERE kind = 'provisional_benchmark'
    UNION ALL
    SELECT 'benchmark', json_extract_string(subject, '$.benchmark_id'), *
    FROM curation_decision WHERE kind = 'canonical_metric'
    UNION ALL
    SELECT 'metric', json_extract_string(subject, '$.id'), * FROM curation_decision WHERE kind = 'provisional_metric'
)
WHERE subject_key IS NOT NULL
ORDER BY created_at, decision_id
