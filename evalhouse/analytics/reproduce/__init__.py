"""Reproductions of the papers' headline numbers: one module per paper, its printed values in a data file beside it."""
