-- The source row key as one macro: what a source row measured and cites (never the fetch time), so
-- a later fetch of the same row supersedes it (v_score_current). The load (insert_scores.sql) and
-- the re-derivation of identities (warehouse/rederive.py, migration 0091) both derive it here, so
-- a score re-derived in place has the key a fresh load of it would have.
CREATE MACRO source_row_key(source_key, source_model_id, source_model_name, config_id, benchmark_id, subset, metric_id,
                            metric_params_key, setup_key, original_source, original_source_url, source_record_id,
                            evaluation_result_id) AS
    substr(sha256(concat_ws(chr(31), source_key, source_model_id, source_model_name, config_id, benchmark_id,
                            coalesce(subset, ''), metric_id, metric_params_key, setup_key,
                            coalesce(original_source, ''), coalesce(original_source_url, ''), source_record_id,
                            coalesce(evaluation_result_id, ''))), 1, 32);
