-- The report sections recorded for the input $pin with the options $options_key by evalhouse
-- $evalhouse_version whose every fit (analysis_ids) is still in analysis_run.
SELECT s.section, s.title, s.status, s.intro, s.blocks, s.analysis_ids
FROM analysis_section s
WHERE s.pin = $pin AND s.options_key = $options_key AND s.evalhouse_version = $evalhouse_version
  AND NOT EXISTS (
      SELECT 1 FROM unnest(CAST(s.analysis_ids AS VARCHAR[])) AS ids(analysis_id)
      WHERE ids.analysis_id NOT IN (SELECT analysis_id FROM analysis_run)
  )
ORDER BY s.section
