"""The analyses as the product runs them: the only API the CLI calls.

Every function here follows the same rules (they are what ``--help`` of each command says):

* **Input**: ``snapshot`` (a frozen snapshot folder) when given, else the live warehouse at
  ``db`` opened read-only; the CSV commands read ``input`` instead.
* **Pin**: a snapshot's id; on the live warehouse its content hash
  (:func:`evalhouse.warehouse.state.state_id`); on a CSV the file's sha256. It is stored where a
  snapshot id goes, so every recorded analysis says what it saw.
* **Record**: unless ``record=False``, the run and its result rows are written into the
  warehouse at ``db`` (created and migrated if missing), taking the writer lock only for that
  final transaction.
* **Errors**: bad input or usage raises :class:`~evalhouse.errors.InputError` (exit 2); a run or
  check that failed, :class:`~evalhouse.errors.RunFailed` (exit 1). A finished run whose
  verdict is negative (a reproduction off, a comparison that fails) returns ``ok=False``.
"""

from evalhouse.analytics.runs.bob import compare, reproduce_paper004
from evalhouse.analytics.runs.common import Outcome
from evalhouse.analytics.runs.equate import eci, equate_csv, equate_hub
from evalhouse.analytics.runs.factor import efa, factor_grid, reproduce_paper000
from evalhouse.analytics.runs.items import analyze_items, simulate_panel
from evalhouse.analytics.runs.report import report

__all__ = [
    "Outcome",
    "analyze_items",
    "compare",
    "eci",
    "efa",
    "equate_csv",
    "equate_hub",
    "factor_grid",
    "report",
    "reproduce_paper000",
    "reproduce_paper004",
    "simulate_panel",
]
