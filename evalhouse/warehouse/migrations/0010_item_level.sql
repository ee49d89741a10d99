-- Item-level data (paper 003): items, the checkpoints that answered them, the harness runs that
-- asked, and one response per item x checkpoint x seed x epoch. item_response is the large table
-- (10^7+ rows): it is bulk-loaded from Arrow, carries no secondary index, and keys on text ids
-- that DuckDB stores dictionary-compressed.

-- One benchmark item. item_id is stable across sources: "<benchmark>/<subtask>/<split>/<source id>".
CREATE TABLE item (
    item_id           TEXT PRIMARY KEY,
    benchmark         TEXT NOT NULL,
    subtask           TEXT NOT NULL DEFAULT '',
    split             TEXT NOT NULL DEFAULT '',
    source_item_id    TEXT NOT NULL,
    content_sha256    TEXT,                 -- sha256 of the canonical JSON of (input, choices, gold); NULL when no content
    gold              TEXT,                 -- the gold answer as the source states it (an index, a letter, a string)
    gold_index        INTEGER,              -- 0-based index of the gold choice for multiple choice
    choices           TEXT[],
    domain            TEXT,                 -- e.g. math, general_knowledge (a label a person or registry chose)
    dataset_revision  TEXT,
    content           JSON,                 -- the item as the source gave it (doc, instance), when given
    first_source_key  TEXT NOT NULL,
    first_run_id      TEXT NOT NULL
);

-- One model checkpoint. A training seed is part of the checkpoint's identity (PolyPythias seed 3
-- at step 1000 is a different model from seed 4 at step 1000).
CREATE TABLE checkpoint (
    checkpoint_id     TEXT PRIMARY KEY,     -- "<suite>/<checkpoint>" plus "/seed=<n>" when a seed is known
    suite             TEXT NOT NULL,
    checkpoint        TEXT NOT NULL,
    model             TEXT,
    size_params       BIGINT,
    seed              INTEGER,
    axis              TEXT CHECK (axis IS NULL OR axis IN ('PT', 'SFT', 'RL', 'anchor')),
    effort            DOUBLE,
    effort_unit       TEXT,                 -- tokens, sft_pairs, rl_prompts, steps ...
    revision          TEXT,
    first_source_key  TEXT NOT NULL,
    first_run_id      TEXT NOT NULL
);

-- One harness run of one task on one checkpoint.
CREATE TABLE eval_run (
    eval_run_id            TEXT PRIMARY KEY, -- sha256 prefix of (source, harness, version, task, config, prompt hash, checkpoint)
    source_key             TEXT NOT NULL,
    run_id                 TEXT NOT NULL,
    raw_sha256             TEXT NOT NULL,
    harness                TEXT NOT NULL,    -- lm-evaluation-harness, helm, inspect_ai, eee, panel-csv, simulator
    harness_version        TEXT,
    task                   TEXT NOT NULL,
    checkpoint_id          TEXT NOT NULL,
    task_config            JSON,
    prompt_template_sha256 TEXT,
    n_shot                 INTEGER,
    evaluated_at           TEXT,
    aggregate              JSON,             -- the harness's own aggregate results for this task
    details                JSON,             -- every other header field of the log (recorded, not dropped)
    locator                TEXT NOT NULL
);

-- One response: item x checkpoint x seed x epoch, with what the harness kept per choice.
CREATE TABLE item_response (
    item_id           TEXT NOT NULL,
    checkpoint_id     TEXT NOT NULL,
    eval_run_id       TEXT NOT NULL,
    seed              INTEGER,
    epoch             INTEGER NOT NULL DEFAULT 1,
    p_correct         DOUBLE,               -- probability of the gold answer (softmax over choices), or the 0/1 score
    acc               DOUBLE,
    acc_norm          DOUBLE,
    margin            DOUBLE,               -- gold minus runner-up log-likelihood per character
    score_name        TEXT,                 -- the metric p_correct came from when it is not a probability
    choice_logprob    DOUBLE[],
    choice_is_greedy  BOOLEAN[],
    choice_chars      INTEGER[],
    choice_tokens     INTEGER[],
    chosen_index      INTEGER,
    output            TEXT,                 -- the generated or chosen answer text
    scores            JSON,                 -- every per-sample metric of the log, by name
    unmapped          JSON,                 -- fields of the source line with no column, kept verbatim
    source_key        TEXT NOT NULL,
    run_id            TEXT NOT NULL,
    raw_sha256        TEXT NOT NULL,
    locator           TEXT NOT NULL,        -- the file (or file#json-path) in the raw payload
    line              BIGINT                -- 1-based line (or element) number within it
);
