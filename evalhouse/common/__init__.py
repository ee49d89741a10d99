"""Small helpers every layer shares: packaged files, JSON-safe values, slugs, dates.

This package sits at the bottom of the dependency order (it imports nothing else of evalhouse
but :mod:`evalhouse.errors`), so each helper exists once.
"""
