"""What was refused: quarantine rows with their locators and reasons, and counts per source and stage."""

from __future__ import annotations

from typing import Any

import duckdb

from evalhouse.common.choices import require_choice
from evalhouse.common.resources import read_sql

STAGES = ("parse", "validate", "canonicalise", "load")


def known_sources(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [r[0] for r in con.execute("SELECT source_key FROM source ORDER BY 1").fetchall()]


def quarantine_report(
    con: duckdb.DuckDBPyConnection, *, source: str | None = None, stage: str | None = None, limit: int = 50
) -> dict[str, Any]:
    """``{"rows": [...], "counts": [...]}`` of ``source`` and ``stage`` when given (rows: at most
    ``limit``; counts: all of them); an unknown source or stage is an :class:`InputError`."""
    if source is not None:
        require_choice(source, known_sources(con), "source")
    if stage is not None:
        require_choice(stage, STAGES, "stage")
    cur = con.execute(read_sql("evalhouse.warehouse", "quarantine_rows.sql"), [source, stage, limit])
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
    counted = con.execute(read_sql("evalhouse.warehouse", "quarantine_counts.sql"), [source, stage]).fetchall()
    counts = [{"source": s, "stage": st, "n": n} for s, st, n in counted]
    return {"rows": rows, "counts": counts}
