-- What the report and the explorer reuse instead of fitting again.
--
-- analysis_section: a report section as it was drawn from its fits (title, status, intro, the HTML
-- blocks with their figures), keyed by the pin of the input it was fitted on (a snapshot id or a
-- warehouse-state id), the section, what else it read (options_key: '' for nothing) and the
-- evalhouse version that drew it. analysis_ids names the analysis_run rows behind it; a section
-- is reused only while every one of them is still recorded.
CREATE TABLE analysis_section (
    pin                 TEXT NOT NULL,
    section             TEXT NOT NULL,
    options_key         TEXT NOT NULL DEFAULT '',
    evalhouse_version   TEXT NOT NULL,
    title               TEXT NOT NULL,
    status              TEXT NOT NULL,
    intro               TEXT NOT NULL DEFAULT '',
    blocks              JSON NOT NULL,
    analysis_ids        JSON NOT NULL,
    recorded_at         TIMESTAMP NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (pin, section, options_key, evalhouse_version)
);

-- _snapshot_pin: the snapshots 'report' and 'site' froze the live warehouse into
-- (<db>.snapshots/<UTC time>/), by the content of the state they froze (state_key: row digests of
-- every table a snapshot holds, with the versions its manifest names). A pin of an unchanged
-- warehouse reuses its folder without writing anything; used_at orders the pins for pruning
-- (--keep N). Internal (its name starts with _): not part of any snapshot or state id.
CREATE TABLE _snapshot_pin (
    state_key           TEXT PRIMARY KEY,
    snapshot_id         TEXT NOT NULL,
    path                TEXT NOT NULL,
    pinned_at           TIMESTAMP NOT NULL,
    used_at             TIMESTAMP NOT NULL
);
