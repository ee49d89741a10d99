"""Reading the audit's SQL files: named parameters in, dicts out."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import duckdb

from evalhouse.common.resources import read_sql
from evalhouse.errors import NotFound

PARAM_RE = re.compile(r"\$([a-z_][a-z0-9_]*)")


class AuditError(NotFound):
    """The thing to audit is not in the warehouse (with what was tried)."""


@cache
def sql(name: str) -> str:
    return read_sql("evalhouse.warehouse", name)


def rows(con: duckdb.DuckDBPyConnection, query_file: str, /, **params: Any) -> list[dict[str, Any]]:
    """Rows of ``sql/<query_file>`` as dicts, passing only the parameters it names."""
    text = sql(query_file)
    wanted = set(PARAM_RE.findall(text))
    cursor = con.execute(text, {k: v for k, v in params.items() if k in wanted})
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def as_json(text: str | None) -> Any:
    return None if text is None else json.loads(text)
