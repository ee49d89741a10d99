-- depends: v_release_date
-- The release date of each model configuration: its own best evidence (a configuration can be
-- released after its base model, e.g. a later reasoning variant), else its base model's choice.
-- `conflict`: its own claims disagree by more than a month and no verified manual correction of
-- the configuration resolves them; without own evidence, the base model's conflict.
CREATE OR REPLACE VIEW v_config_release_date AS
WITH ranked AS (
    SELECT e.*, coalesce(k.rank, 99) AS kind_rank
    FROM release_date_evidence e
    LEFT JOIN release_date_kind k ON k.kind = e.kind
    WHERE e.config_id IS NOT NULL
),
spread AS (
    SELECT config_id,
           count(*) AS n_evidence,
           coalesce(date_diff('day', min(date) FILTER (WHERE NOT lower_bound),
                                     max(date) FILTER (WHERE NOT lower_bound)) > 31, false)
             AND NOT bool_or(kind = 'manual_correction' AND verification = 'verified') AS conflict
    FROM ranked GROUP BY config_id
),
own AS (
    SELECT config_id, date, precision, kind, verification, evidence_id
    FROM ranked
    QUALIFY row_number() OVER (
        PARTITION BY config_id
        ORDER BY lower_bound, kind_rank,
                 CASE precision WHEN 'day' THEN 1 WHEN 'month' THEN 2 ELSE 3 END,
                 (verification = 'verified') DESC, date, recorded_at DESC, evidence_id  -- a total order
    ) = 1
)
SELECT
    mc.config_id,
    coalesce(own.date, rd.release_date) AS release_date,
    coalesce(own.precision, rd.precision) AS precision,
    coalesce(own.kind, rd.kind) AS kind,
    CASE WHEN own.date IS NOT NULL THEN 'configuration' WHEN rd.release_date IS NOT NULL THEN 'base model' END AS level,
    coalesce(own.verification, rd.verification) AS verification,
    coalesce(own.evidence_id, rd.evidence_id) AS evidence_id,
    coalesce(spread.n_evidence, 0) AS n_evidence,
    CASE WHEN own.date IS NOT NULL THEN spread.conflict ELSE coalesce(rd.conflict, false) END AS conflict
FROM model_config mc
LEFT JOIN own ON own.config_id = mc.config_id
LEFT JOIN spread ON spread.config_id = mc.config_id
LEFT JOIN v_release_date rd ON rd.base_model_id = mc.base_model_id;
