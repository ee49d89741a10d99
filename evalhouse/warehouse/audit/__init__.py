"""Provenance audit: where a number came from, and whether its bytes are still the same bytes.

"Every score can be traced to its raw bytes" is a promise the warehouse makes; these functions
keep it checkable. They are pure reads over a connection (plus, where bytes matter, the raw store)
and return plain JSON-ready dicts, so the CLI renders them and scripts consume them as they are:

* :func:`score_chain` — one score's chain, decisions, current status and its cell's candidates;
* :func:`model_report` — a model named any way a user would, with every source's values side by side;
* :func:`conflicts` — cells several sources give a value for, with every candidate and the rule;
* :func:`verify_raw` — re-hash the raw store and check every payload the warehouse refers to.
"""

from evalhouse.warehouse.audit.conflicts import conflicts
from evalhouse.warehouse.audit.model import model_report, resolve_benchmark, resolve_model_name
from evalhouse.warehouse.audit.queries import AuditError
from evalhouse.warehouse.audit.raw import RawVerification, payload_status, verify_raw
from evalhouse.warehouse.audit.score import find_score, score_chain

__all__ = [
    "AuditError",
    "RawVerification",
    "conflicts",
    "find_score",
    "model_report",
    "payload_status",
    "resolve_benchmark",
    "resolve_model_name",
    "score_chain",
    "verify_raw",
]
