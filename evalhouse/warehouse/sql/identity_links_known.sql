-- The identity links (and candidate links) already recorded for these subjects, so a load records
-- each one once: $1 = subjects as JSON text.
SELECT kind, rule, CAST(subject AS VARCHAR)
FROM curation_decision
WHERE kind IN ('identity_link', 'identity_candidate')
  AND CAST(subject AS VARCHAR) IN (SELECT unnest(?::VARCHAR[]))
