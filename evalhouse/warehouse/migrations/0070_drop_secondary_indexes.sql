-- Non-unique ART indexes cost every load more than they ever save a query here: DuckDB scans a
-- column with its zone maps, and a lookup by evaluation or cell over 10^6 scores takes
-- milliseconds without them, while keeping them up to date was a sixth of an import's time and
-- a large share of its memory (each index lives in memory until the transaction commits).
-- Keys and UNIQUE constraints (score_id, fingerprint, evaluation_id ...) stay: they guard identity.
DROP INDEX IF EXISTS score_cell;
DROP INDEX IF EXISTS score_evaluation;
DROP INDEX IF EXISTS raw_snapshot_sha;
