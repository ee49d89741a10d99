-- The model identifiers every other source names (evaluation records and model aliases),
-- for sources that fetch per model (model cards). $1: the source asking, left out.
SELECT DISTINCT model_source_id FROM evaluation WHERE source_key <> $1 AND model_source_id IS NOT NULL
ORDER BY 1;
