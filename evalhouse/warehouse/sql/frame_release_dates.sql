-- One row per release-date claim, with the date as a timestamp (midnight) so it compares with
-- the suite's bounds; month- and year-precision claims are stored as the first day.
SELECT
    evidence_id,
    base_model_id,
    kind,
    precision,
    CAST(date AS TIMESTAMP) AS date
FROM release_date_evidence
