-- How many rows each source has in quarantine, per stage; only source $1 and stage $2 when given.
SELECT source_key, stage, count(*) AS n
FROM quarantine
WHERE ($1 IS NULL OR source_key = $1) AND ($2 IS NULL OR stage = $2)
GROUP BY ALL
ORDER BY 1, 2;
