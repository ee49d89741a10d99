"""What analyses read: model x benchmark matrices, model facts, grids, pins (snapshot / state ids)."""
