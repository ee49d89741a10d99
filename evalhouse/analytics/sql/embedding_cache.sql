-- Embedding cache and frozen benchmark texts for paper 004 (Balance of Benchmarks).
-- The lead copies these into a warehouse migration; evalhouse.analytics.texts.ensure_text_tables
-- applies them to a scratch database (tests, ad-hoc runs). Keep the two in sync.

-- One vector per (encoder, revision, dimension, text hash): a cached vector is reused only for
-- the exact encoder build and exact text bytes that produced it. vector_sha256 is the sha256 of
-- the little-endian float32 bytes, checked on every read.
CREATE TABLE IF NOT EXISTS embedding (
    encoder TEXT NOT NULL,
    revision TEXT NOT NULL,
    dim INTEGER NOT NULL,
    text_sha256 TEXT NOT NULL,
    vector FLOAT[] NOT NULL,
    vector_sha256 TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (encoder, revision, dim, text_sha256)
);

-- Frozen descriptions, paraphrases and canonical task queries (kind in description,
-- paraphrase, query). text_sha256 is the sha256 of the exact UTF-8 text.
CREATE TABLE IF NOT EXISTS benchmark_text (
    benchmark_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    origin TEXT NOT NULL,
    PRIMARY KEY (benchmark_id, kind, text_sha256)
);
