"""Balance of Benchmarks (paper 004): benchmark texts, encoders, density weights, the task field, LOBO."""
