"""The evalhouse version, recorded with every run, snapshot and analysis.

The one place it is written: pyproject.toml reads it from here (``[tool.setuptools.dynamic]``), so
no import of ``importlib.metadata`` (≈ 50 ms) is needed at start-up.
"""

__version__ = "0.2.0"
