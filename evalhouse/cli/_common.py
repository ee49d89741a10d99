"""Pieces every command shares: the global --db, JSON output, the console."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from evalhouse.config import resolve_db_path

console = Console(stderr=True, soft_wrap=True)  # messages carry paths; never break them
out = Console()

JsonFlag = Annotated[bool, typer.Option("--json", help="Print a JSON document on stdout for scripts.")]


def db_path(ctx: typer.Context) -> Path:
    """The warehouse path chosen by the root ``--db`` option (or its env/default fallback)."""
    root = ctx.find_root()
    return resolve_db_path((root.obj or {}).get("db"))


def emit_json(payload: Any) -> None:
    sys.stdout.write(json.dumps(payload, indent=2, default=str, ensure_ascii=False) + "\n")


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print a one-line error and return the Exit to raise (``raise fail(...)``)."""
    console.print(f"[bold red]error:[/] {message}", highlight=False)
    return typer.Exit(code)
