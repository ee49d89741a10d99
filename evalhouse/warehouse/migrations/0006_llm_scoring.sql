-- An LLM-as-judge result says how it was judged (metric_config.llm_scoring: judge models,
-- prompt, aggregation). Kept whole as JSON so analyses can select or exclude judged scores.
ALTER TABLE score ADD COLUMN llm_scoring JSON;
