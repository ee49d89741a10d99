-- Curation settings the canonical views read (one row per key), so a policy is data, not code,
-- and a change of policy is itself a recorded row.
CREATE TABLE curation_setting (
    key         TEXT PRIMARY KEY,
    value       TEXT NOT NULL,
    updated_at  TIMESTAMP NOT NULL DEFAULT current_timestamp,
    reason      TEXT
);

INSERT INTO curation_setting (key, value, reason) VALUES
    ('conflict_policy', 'prefer-independent',
     'default: never average a developer-reported number with an independent one'),
    ('disagreement_tolerance', '0.05',
     'paper 004: cells whose sources differ by more than 0.05 on the normalised scale are flagged');

-- Release-date evidence kinds and their precedence (synchronised from
-- evalhouse/curation/registries/evidence_kinds.yaml): rank 1 wins.
CREATE TABLE release_date_kind (
    kind            TEXT PRIMARY KEY,
    rank            INTEGER NOT NULL,
    lower_bound     BOOLEAN NOT NULL,
    description     TEXT NOT NULL
);
