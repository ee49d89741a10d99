-- The sources: tier, kind, organisation and how many current scores each gave.
SELECT s.source_key, s.name, s.kind, s.tier, s.organisation, s.homepage,
       (SELECT count(*) FROM v_cell_candidates c WHERE c.source_key = s.source_key) AS n_scores
FROM source s
ORDER BY s.source_key
