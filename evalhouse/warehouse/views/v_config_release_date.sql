-- depends: v_release_date
-- The release date of each model configuration: its own best evidence (a configuration can be
-- released after its base model, e.g. a later reasoning variant), else its base model's choice.
CREATE OR REPLACE VIEW v_config_release_date AS
WITH own AS (
    SELECT e.config_id, e.date, e.precision, e.kind
    FROM release_date_evidence e
    LEFT JOIN release_date_kind k ON k.kind = e.kind
    WHERE e.config_id IS NOT NULL
    QUALIFY row_number() OVER (
        PARTITION BY e.config_id
        ORDER BY e.lower_bound, coalesce(k.rank, 99),
                 CASE e.precision WHEN 'day' THEN 1 WHEN 'month' THEN 2 ELSE 3 END, e.date
    ) = 1
)
SELECT
    mc.config_id,
    coalesce(own.date, rd.release_date) AS release_date,
    coalesce(own.precision, rd.precision) AS precision,
    coalesce(own.kind, rd.kind) AS kind,
    CASE WHEN own.date IS NOT NULL THEN 'configuration' WHEN rd.release_date IS NOT NULL THEN 'base model' END AS level
FROM model_config mc
LEFT JOIN own ON own.config_id = mc.config_id
LEFT JOIN v_release_date rd ON rd.base_model_id = mc.base_model_id;
