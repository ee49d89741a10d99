-- The conflict policy the canonical view applies, when it was set and why.
SELECT value, updated_at, reason FROM curation_setting WHERE key = 'conflict_policy';
