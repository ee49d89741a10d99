-- How many rows each source has in quarantine, per stage.
SELECT source_key, stage, count(*) AS n
FROM quarantine
GROUP BY ALL
ORDER BY 1, 2;
