-- Cells that never merge different things, identities that keep distinct models apart, and the
-- parts of an EEE record the warehouse could not hold as columns.

-- A score's cell beyond model, benchmark and metric (curation/cells.py), what the record said
-- about generation and uncertainty, and when the bytes it came from were fetched.
ALTER TABLE score ADD COLUMN subset TEXT;
ALTER TABLE score ADD COLUMN metric_params JSON;
ALTER TABLE score ADD COLUMN metric_params_key TEXT DEFAULT '';  -- always written by the loader
ALTER TABLE score ADD COLUMN generation_config JSON;
ALTER TABLE score ADD COLUMN uncertainty JSON;          -- the record's whole uncertainty block (sd, bootstrap count, method ...)
ALTER TABLE score ADD COLUMN observed_at TIMESTAMP;     -- when the record's bytes were retrieved (its retrieved_timestamp)

-- An evaluation keeps the id its source gave it when evalhouse had to give it another one (two
-- different records under one EEE evaluation_id), the schema it was migrated from, and the parts
-- of the record analyses query.
ALTER TABLE evaluation ADD COLUMN source_evaluation_id TEXT;
ALTER TABLE evaluation ADD COLUMN migrated_from TEXT;
ALTER TABLE evaluation ADD COLUMN eval_library_details JSON;
ALTER TABLE evaluation ADD COLUMN source_metadata JSON;

-- Model identity: lineage, the loose key candidate links are found by, and whether the developer
-- was read from the name rather than stated by a source.
ALTER TABLE base_model ADD COLUMN derived_from TEXT;
ALTER TABLE base_model ADD COLUMN match_key TEXT;
ALTER TABLE base_model ADD COLUMN developer_inferred BOOLEAN DEFAULT false;

-- One source identifier may name several configurations (float16 and bfloat16 runs of one repo).
CREATE TABLE model_alias_v5 (
    source_key       TEXT NOT NULL,
    source_model_id  TEXT NOT NULL,
    config_id        TEXT NOT NULL,
    model_name       TEXT,
    developer_raw    TEXT,
    first_run_id     TEXT,
    PRIMARY KEY (source_key, source_model_id, config_id)
);
INSERT INTO model_alias_v5 SELECT source_key, source_model_id, config_id, model_name, developer_raw, first_run_id FROM model_alias;
DROP TABLE model_alias;
ALTER TABLE model_alias_v5 RENAME TO model_alias;
