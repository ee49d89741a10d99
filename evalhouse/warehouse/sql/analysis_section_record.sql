-- Record a report section as drawn ($pin, $section, $options_key, $evalhouse_version, $title,
-- $status, $intro, $blocks, $analysis_ids); drawing it again for the same key replaces the row.
INSERT OR REPLACE INTO analysis_section
    (pin, section, options_key, evalhouse_version, title, status, intro, blocks, analysis_ids, recorded_at)
VALUES ($pin, $section, $options_key, $evalhouse_version, $title, $status, $intro, $blocks, $analysis_ids,
        current_timestamp)
