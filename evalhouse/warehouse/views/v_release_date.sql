-- The chosen release date of every base model with evidence: the best-ranked evidence kind
-- (release_date_kind), then the finer precision, then verified before unverified, then the
-- earliest date, then the latest recorded (a newer correction wins over an older one). Lower
-- bounds never win over a dated claim of another kind.
-- `conflict` marks base models where claims about one thing disagree by more than a month: about
-- one configuration (its evidence rows) or about the base model itself (rows without a
-- configuration). Configurations released months apart (gpt-4o-2024-05-13, gpt-4o-2024-08-06)
-- are not a conflict. A verified manual correction resolves the claims it sits with: of its
-- configuration, or, without one, of the whole base model (`corrected`).
CREATE OR REPLACE VIEW v_release_date AS
WITH ev AS (
    SELECT
        e.*,
        coalesce(k.rank, 99) AS kind_rank,
        CASE e.precision WHEN 'day' THEN 1 WHEN 'month' THEN 2 ELSE 3 END AS precision_rank
    FROM release_date_evidence e
    LEFT JOIN release_date_kind k ON k.kind = e.kind
),
claims AS (
    SELECT base_model_id, config_id,
           count(*) AS n,
           min(date) FILTER (WHERE NOT lower_bound) AS earliest,
           max(date) FILTER (WHERE NOT lower_bound) AS latest,
           bool_or(kind = 'manual_correction' AND verification = 'verified') AS corrected
    FROM ev GROUP BY base_model_id, config_id
),
spread AS (
    SELECT base_model_id,
           sum(n)::BIGINT AS n_evidence,
           min(earliest) AS earliest,
           max(latest) AS latest,
           bool_or(coalesce(date_diff('day', earliest, latest) > 31, false) AND NOT corrected) AS disputed,
           bool_or(config_id IS NULL AND corrected) AS corrected
    FROM claims GROUP BY base_model_id
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
    spread.disputed AND NOT spread.corrected AS conflict,
    spread.corrected
FROM ev
JOIN spread USING (base_model_id)
QUALIFY row_number() OVER (
    PARTITION BY ev.base_model_id
    ORDER BY ev.lower_bound, ev.kind_rank, ev.precision_rank,
             (ev.verification = 'verified') DESC, ev.date, ev.recorded_at DESC, ev.evidence_id  -- a total order
) = 1;
