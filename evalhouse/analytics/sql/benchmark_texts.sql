SELECT benchmark_id, description, paraphrase FROM benchmark ORDER BY benchmark_id;
