"""Sparse matrices before factoring: densifiers and imputers (paper 002)."""
