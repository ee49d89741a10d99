-- depends: v_scores_canonical
-- Opt-in, for analyses that mean to pool versions: canonical cells labelled with the benchmark's
-- family and version (LiveCodeBench v1..v6, Terminal-Bench 1.0 / Hard / 2.1, FrontierMath tiers,
-- AA Intelligence Index v2 vs v4...). Every other view keeps each version its own benchmark, so no
-- analysis joins scores across versions unless it reads this one.
CREATE OR REPLACE VIEW v_scores_by_family AS
SELECT
    coalesce(b.family_id, sc.benchmark_id) AS family_id,
    b.version,
    sc.*
FROM v_scores_canonical sc
LEFT JOIN benchmark b USING (benchmark_id);
