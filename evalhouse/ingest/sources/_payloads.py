"""Whole-payload readers the leaderboard parsers share: a JSON document or a CSV table, or a
:class:`ParseError` naming what is wrong — never another exception (a truncated file, a NUL byte, a
field past the csv module's limit or JSON nested past the interpreter's depth all end here)."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from evalhouse.ingest.source import ParseError
from evalhouse.ingest.sources._common import decode_text


def json_document(body: bytes, what: str) -> Any:
    """The parsed JSON of ``body``."""
    try:
        return json.loads(decode_text(body, what))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ParseError(f"{what} is not JSON: {exc}") from exc


def csv_table(body: bytes, what: str) -> tuple[list[str], list[dict[str, Any]]]:
    """``(header, rows)`` of a CSV with a header line; each row maps the header to its cells."""
    try:
        reader = csv.DictReader(io.StringIO(decode_text(body, what), newline=""))
        header = list(reader.fieldnames or [])
        rows = list(reader)
    except csv.Error as exc:
        raise ParseError(f"{what} is not a readable CSV: {exc}") from exc
    return header, rows
