-- Configurations of one base model that may be one snapshot written with two precisions, and are
-- kept apart: a month and a day in it ('2025-03' beside '2025-03-27'), a month-day whose year no
-- evidence gave beside a dated day ('--05-28' beside '2025-05-28'), an undated name (an alias)
-- beside a dated snapshot. Every other setting of the pair is equal. Identity links what evidence
-- decides (the snapshot registry, the source's own identifier: curation_decision kind
-- identity_link); this view is the recorded candidate link for the rest, for a person to review.
CREATE OR REPLACE VIEW v_config_candidates AS
WITH dated AS (
    SELECT
        config_id,
        base_model_id,
        json_extract_string(flags, '$.date_tag') AS date_tag,
        regexp_replace(regexp_replace(config_id, '\|date=[^|]*', ''), '\|alias=latest', '') AS undated_id
    FROM model_config
)
SELECT
    a.base_model_id,
    a.config_id AS config_a,
    b.config_id AS config_b,
    a.date_tag AS date_a,
    b.date_tag AS date_b,
    CASE
        WHEN a.date_tag IS NULL THEN 'an undated name (an alias) beside a dated snapshot'
        WHEN a.date_tag LIKE '--%' THEN 'a month-day without its year beside a dated day'
        ELSE 'a month beside a day in it'
    END AS reason
FROM dated a
JOIN dated b ON a.base_model_id = b.base_model_id AND a.undated_id = b.undated_id AND a.config_id <> b.config_id
WHERE length(b.date_tag) = 10 AND b.date_tag NOT LIKE '--%'
  AND (
    a.date_tag IS NULL
    OR (length(a.date_tag) = 7 AND a.date_tag NOT LIKE '--%' AND b.date_tag LIKE a.date_tag || '-%')
    OR (a.date_tag LIKE '--%' AND substr(b.date_tag, 5) = substr(a.date_tag, 2))
  );
