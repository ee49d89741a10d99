-- Canonical cells whose candidates come from two sources or more, per pair of sources (a cell of
-- three sources counts once for each of its three pairs), with how many of them disagree beyond
-- the tolerance. The most shared pair first.
WITH shared AS (
    SELECT cell_id, candidate_sources, disagreement FROM v_scores_canonical WHERE n_sources >= 2
),
pairs AS (
    SELECT s.cell_id, s.disagreement, a.source_a, b.source_b
    FROM shared s,
         unnest(s.candidate_sources) AS a(source_a),
         unnest(s.candidate_sources) AS b(source_b)
    WHERE a.source_a < b.source_b
)
SELECT source_a, source_b, count(*) AS cells, count(*) FILTER (WHERE disagreement) AS cells_disagreeing
FROM pairs
GROUP BY ALL
ORDER BY cells DESC, source_a, source_b
