-- The curation decisions that touch one score: exact-duplicate skips of its evaluation's
-- fingerprint, supersessions it made or suffered, conflict resolutions of its cell ($cell_id), the
-- provisional registry entries its benchmark or metric were created as, the benchmark links that
-- made a collection's benchmark its benchmark, and the canonical-metric
-- choices of its benchmark.
SELECT decision_id, kind, rule, subject, detail, run_id, created_at
FROM curation_decision
WHERE (kind = 'exact_duplicate' AND json_extract_string(subject, '$.fingerprint') = $fingerprint)
   OR (kind = 'supersession' AND (json_extract_string(subject, '$.score_id') = $score_id
                                  OR json_extract_string(subject, '$.superseded_score_id') = $score_id))
   OR (kind = 'conflict_resolution' AND json_extract_string(subject, '$.cell_id') = $cell_id)
   OR (kind = 'provisional_benchmark' AND json_extract_string(subject, '$.id') = $benchmark_id)
   OR (kind = 'benchmark_link' AND json_extract_string(subject, '$.linked_to') = $benchmark_id)
   OR (kind = 'provisional_metric' AND json_extract_string(subject, '$.id') = $metric_id)
   OR (kind = 'canonical_metric' AND json_extract_string(subject, '$.benchmark_id') = $benchmark_id)
ORDER BY created_at, decision_id
