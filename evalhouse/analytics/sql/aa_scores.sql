-- One source's current value per configuration and benchmark on the benchmark's canonical
-- metric, keyed by the source's slug. $1: the source key.
SELECT
    json_extract_string(e.record, '$.model_info.additional_details.slug') AS slug,
    s.benchmark_id,
    s.value
FROM v_score_current s
JOIN evaluation e USING (evaluation_id)
JOIN v_benchmark_metric bm ON bm.benchmark_id = s.benchmark_id AND bm.metric_id = s.metric_id
WHERE s.source_key = $1 AND s.setup_key = '';
