-- The chosen release date of every base model with evidence: the best-ranked evidence kind
-- (release_date_kind), then the finer precision, then verified before unverified, then the
-- earliest date. Lower bounds never win over a dated claim of another kind. `conflict` marks base
-- models whose non-lower-bound evidence spans more than a month.
CREATE OR REPLACE VIEW v_release_date AS
WITH ev AS (
    SELECT
        e.*,
        coalesce(k.rank, 99) AS kind_rank,
        CASE e.precision WHEN 'day' THEN 1 WHEN 'month' THEN 2 ELSE 3 END AS precision_rank
    FROM release_date_evidence e
    LEFT JOIN release_date_kind k ON k.kind = e.kind
),
spread AS (
    SELECT base_model_id,
           count(*) AS n_evidence,
           min(date) FILTER (WHERE NOT lower_bound) AS earliest,
           max(date) FILTER (WHERE NOT lower_bound) AS latest
    FROM ev GROUP BY base_model_id
)
SELECT
    ev.base_model_id,
    ev.date AS release_date,
    ev.precision,
    ev.kind,
    ev.lower_bound,
    ev.verification,
    ev.source_key,
    ev.url,
    ev.evidence_id,
    spread.n_evidence,
    spread.earliest,
    spread.latest,
    coalesce(date_diff('day', spread.earliest, spread.latest) > 31, false) AS conflict
FROM ev
JOIN spread USING (base_model_id)
QUALIFY row_number() OVER (
    PARTITION BY ev.base_model_id
    ORDER BY ev.lower_bound, ev.kind_rank, ev.precision_rank,
             (ev.verification = 'verified') DESC, ev.date, ev.recorded_at DESC
) = 1;
