-- Release-date evidence of the base models $base_model_ids, earliest claim first.
SELECT base_model_id, config_id, date, precision, kind, lower_bound, verification, source_key,
       url, raw_sha256, reason, recorded_by, recorded_at, evidence_id
FROM release_date_evidence
WHERE list_contains($base_model_ids, base_model_id)
ORDER BY base_model_id, date, kind, evidence_id
