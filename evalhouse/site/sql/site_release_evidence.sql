-- Every release-date claim, best-ranked kind first.
SELECT e.base_model_id, e.config_id, e.date, e.precision, e.kind, k.rank, e.lower_bound, e.verification,
       e.source_key, e.url, e.raw_sha256, e.reason
FROM release_date_evidence e
LEFT JOIN release_date_kind k USING (kind)
ORDER BY e.base_model_id, coalesce(k.rank, 99), e.date, e.config_id
