-- The curation decisions that touch one score: exact-duplicate skips of its evaluation's
-- fingerprint (a later copy of the same record was not loaded again), conflict resolutions of
-- its cell (config x benchmark x metric x setup), the provisional registry entries its
-- benchmark or metric were created as, and the canonical-metric choices of its benchmark.
SELECT decision_id, kind, rule, subject, detail, run_id, created_at
FROM curation_decision
WHERE (kind = 'exact_duplicate' AND json_extract_string(subject, '$.fingerprint') = $fingerprint)
   OR (kind = 'conflict_resolution'
       AND json_extract_string(subject, '$.config_id') = $config_id
       AND json_extract_string(subject, '$.benchmark_id') = $benchmark_id
       AND json_extract_string(subject, '$.metric_id') = $metric_id
       AND coalesce(json_extract_string(subject, '$.setup_key'), '') = $setup_key)
   OR (kind = 'provisional_benchmark' AND json_extract_string(subject, '$.id') = $benchmark_id)
   OR (kind = 'provisional_metric' AND json_extract_string(subject, '$.id') = $metric_id)
   OR (kind = 'canonical_metric' AND json_extract_string(subject, '$.benchmark_id') = $benchmark_id)
ORDER BY created_at, decision_id
