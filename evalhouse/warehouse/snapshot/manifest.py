"""What a snapshot manifest may say: checked before anything is read, hashed or run.

A manifest is input from whoever handed over the folder, and anyone can recompute its id and
seal, so self-consistency proves nothing about intent. Everything the snapshot code later turns
into SQL or into a path comes from here, validated: table, view and column names are plain
identifiers, column types are parsed against a closed grammar of DuckDB types and rebuilt from
their tokens (never pasted), file names are relative paths inside the folder with bounded
lengths, and the sizes of every section are capped so a hostile manifest is a clear
:class:`SnapshotError` (exit 2) rather than a traceback or an hour of hashing.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from evalhouse.errors import InputError
from evalhouse.schema.eee_json import json_depth

MAX_MANIFEST_BYTES = 128 * 1024 * 1024
MAX_DEPTH = 16  # the manifest evalhouse writes is 5 levels deep
MAX_FILES = 250_000
MAX_RELATIONS = 2_000
MAX_COLUMNS = 2_000
MAX_PATH = 1_024
MAX_COMPONENT = 255
MAX_TYPE_DEPTH = 8
MAX_TEXT = 256

IDENT_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
HEX64_RE = re.compile(r"^[0-9a-f]{64}$")
CREATED_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$")
#: DuckDB's scalar types as ``information_schema`` spells them: the closed list a column may have.
BASE_TYPES = frozenset(
    {
        "BOOLEAN",
        "TINYINT",
        "SMALLINT",
        "INTEGER",
        "BIGINT",
        "HUGEINT",
        "UTINYINT",
        "USMALLINT",
        "UINTEGER",
        "UBIGINT",
        "UHUGEINT",
        "FLOAT",
        "DOUBLE",
        "DATE",
        "TIME",
        "TIME WITH TIME ZONE",
        "TIMESTAMP",
        "TIMESTAMP WITH TIME ZONE",
        "TIMESTAMP_S",
        "TIMESTAMP_MS",
        "TIMESTAMP_NS",
        "INTERVAL",
        "VARCHAR",
        "BLOB",
        "BIT",
        "UUID",
        "JSON",
    }
)
_TOKEN_RE = re.compile(r"\s*(?:(?P<word>[A-Za-z_][A-Za-z0-9_]*)|(?P<num>\d{1,3})|(?P<punct>[(),\[\]]))")


class SnapshotError(InputError):
    """A snapshot that cannot be created, read or trusted; the message names the problem."""


# -- column types ---------------------------------------------------------------------------


class _TypeParser:
    """Recursive descent over the tokens of one type: base [(p, s)] | STRUCT(..) | MAP(..), then []."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = self._lex(text)
        self.pos = 0

    def _lex(self, text: str) -> list[str]:
        tokens, pos = [], 0
        while pos < len(text):
            match = _TOKEN_RE.match(text, pos)
            if match is None or match.end() == pos:
                if text[pos:].strip() == "":
                    break
                raise ValueError(f"unexpected {text[pos : pos + 12]!r}")
            tokens.append(match.group(match.lastgroup or "word"))
            pos = match.end()
        return tokens

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token.upper() != expected):
            raise ValueError(f"expected {expected or 'a type'}, found {token!r}")
        self.pos += 1
        return token

    def parse(self) -> str:
        out = self.type_(0)
        if self.peek() is not None:
            raise ValueError(f"unexpected {self.peek()!r} after the type")
        return out

    def type_(self, depth: int) -> str:
        if depth > MAX_TYPE_DEPTH:
            raise ValueError(f"nested deeper than {MAX_TYPE_DEPTH} levels")
        word = self.take().upper()
        if word in ("STRUCT", "MAP"):
            out = self.struct(depth) if word == "STRUCT" else self.map_(depth)
        elif word == "DECIMAL":
            out = self.decimal()
        else:
            while self.peek() is not None and self.peek().upper() in ("WITH", "TIME", "ZONE"):
                word += " " + self.take().upper()
            if word not in BASE_TYPES:
                raise ValueError(f"{word!r} is not a column type a snapshot may hold")
            out = word
        while self.peek() == "[":
            self.take("[")
            size = self.peek()
            if size is not None and size.isdigit():
                out += f"[{int(self.take())}]"
            else:
                out += "[]"
            self.take("]")
        return out

    def decimal(self) -> str:
        self.take("(")
        width = self.take()
        self.take(",")
        scale = self.take()
        self.take(")")
        if not (width.isdigit() and scale.isdigit() and 1 <= int(width) <= 38 and int(scale) <= int(width)):
            raise ValueError(f"DECIMAL({width}, {scale}) is not a valid decimal")
        return f"DECIMAL({int(width)},{int(scale)})"

    def struct(self, depth: int) -> str:
        self.take("(")
        fields = []
        while True:
            name = self.take()
            if not IDENT_RE.match(name):
                raise ValueError(f"struct field {name!r} is not a plain identifier")
            fields.append(f"{name} {self.type_(depth + 1)}")
            if self.peek() != ",":
                break
            self.take(",")
        self.take(")")
        return f"STRUCT({', '.join(fields)})"

    def map_(self, depth: int) -> str:
        self.take("(")
        key = self.type_(depth + 1)
        self.take(",")
        value = self.type_(depth + 1)
        self.take(")")
        return f"MAP({key}, {value})"


def sql_type(text: object) -> str:
    """A column type rebuilt from validated tokens; anything outside the grammar is refused."""
    if not isinstance(text, str) or not text.strip() or len(text) > 2_000:
        raise SnapshotError(f"column type {str(text)[:60]!r} is not a type a snapshot may hold")
    try:
        return _TypeParser(text).parse()
    except ValueError as exc:
        raise SnapshotError(f"column type {text[:80]!r} is refused: {exc}") from None


def identifier(name: object, what: str) -> str:
    if not isinstance(name, str) or not IDENT_RE.match(name):
        raise SnapshotError(f"{what} {str(name)[:80]!r} is not a plain identifier ([A-Za-z_][A-Za-z0-9_]*)")
    return name


# -- the manifest ---------------------------------------------------------------------------


def safe_relpath(rel: object) -> str | None:
    """Why ``rel`` cannot name a file inside the snapshot, or None when it can."""
    if not isinstance(rel, str) or not rel:
        return "a file name must be a non-empty string"
    if len(rel) > MAX_PATH:
        return f"a file name longer than {MAX_PATH} characters"
    if "\x00" in rel or "\\" in rel:
        return "a file name with a NUL or a backslash"
    path = PurePosixPath(rel)
    if path.is_absolute() or ".." in path.parts or rel != path.as_posix():
        return "a path outside the snapshot folder (absolute, '..' or not normalised)"
    if any(len(part.encode()) > MAX_COMPONENT for part in path.parts):
        return f"a path component longer than {MAX_COMPONENT} bytes"
    return None


def _text(manifest: dict[str, Any], key: str, *, optional: bool = False, pattern: re.Pattern | None = None) -> None:
    value = manifest.get(key)
    if value is None and optional:
        return
    if not isinstance(value, str) or len(value) > MAX_TEXT or (pattern is not None and not pattern.match(value)):
        raise SnapshotError(f"its {key!r} is missing or malformed ({str(value)[:40]!r})")


def _check_files(files: object) -> None:
    if not isinstance(files, dict):
        raise SnapshotError("its 'files' section is missing or not an object")
    if len(files) > MAX_FILES:
        raise SnapshotError(f"it lists {len(files):,} files, more than the {MAX_FILES:,} a snapshot may hold")
    for rel, entry in files.items():
        if not isinstance(rel, str) or len(rel) > MAX_PATH:
            raise SnapshotError(f"it lists a file name longer than {MAX_PATH} characters")
        if not isinstance(entry, dict):
            continue  # verify names it ("its manifest entry is not an object")
        bad = [
            k
            for k, ok in (
                ("sha256", isinstance(entry.get("sha256"), str) and HEX64_RE.match(entry["sha256"])),
                ("bytes", _count(entry.get("bytes"))),
                ("rows", _count(entry.get("rows"))),
            )
            if not ok
        ]
        if bad:
            raise SnapshotError(f"its entry for {rel[:120]!r} has malformed {', '.join(bad)}")


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_columns(name: str, columns: object) -> list[str]:
    if not isinstance(columns, list) or not columns or len(columns) > MAX_COLUMNS:
        raise SnapshotError(f"{name} has no well-formed column list (1 to {MAX_COLUMNS} name-and-type pairs)")
    names = []
    for column in columns:
        if not (isinstance(column, list) and len(column) == 2):
            raise SnapshotError(f"{name} has a column that is not a name-and-type pair")
        names.append(identifier(column[0], f"column of {name}"))
        sql_type(column[1])
    return names


def _check_relation(name: object, entry: object) -> None:
    name = identifier(name, "table or view name")
    if not isinstance(entry, dict):
        raise SnapshotError(f"its entry for {name} is not an object")
    if entry.get("kind") not in ("table", "view"):
        raise SnapshotError(f"{name} has kind {str(entry.get('kind'))[:20]!r}, not 'table' or 'view'")
    names = _check_columns(name, entry.get("columns"))
    for key in ("primary_key", "files"):
        if not isinstance(entry.get(key), list):
            raise SnapshotError(f"{name} has no {key!r} list")
    if any(c not in names for c in entry["primary_key"]):
        raise SnapshotError(f"{name}'s primary key names columns it does not have")
    part = entry.get("partition_by")
    if part is not None and part not in names:
        raise SnapshotError(f"{name} is partitioned by {str(part)[:40]!r}, which is not one of its columns")
    for rel in entry["files"]:  # a name without a hash in 'files' is verify's to report
        if not isinstance(rel, str) or safe_relpath(rel) is not None:
            raise SnapshotError(f"{name} names a file outside the snapshot folder: {str(rel)[:120]!r}")
    derived = entry.get("derived", False)
    if not isinstance(derived, bool) or (derived and entry["kind"] != "view"):
        raise SnapshotError(f"{name} has a malformed 'derived' flag (only a view may be built on open)")
    if not derived and not _count(entry.get("rows")):  # a view built on open stores no rows
        raise SnapshotError(f"{name} has no row count")


def check_manifest(manifest: object, raw_size: int = 0) -> dict[str, Any]:
    """``manifest`` if every part the snapshot code reads is well-formed; else a :class:`SnapshotError`."""
    if raw_size > MAX_MANIFEST_BYTES:
        raise SnapshotError(f"the manifest is {raw_size:,} bytes, more than {MAX_MANIFEST_BYTES:,}")
    if not isinstance(manifest, dict):
        raise SnapshotError("the manifest is not a JSON object")
    depth = json_depth(manifest, limit=MAX_DEPTH)
    if depth > MAX_DEPTH:
        raise SnapshotError(f"the manifest is nested more than {MAX_DEPTH} levels deep")
    _text(manifest, "snapshot_id", pattern=HEX64_RE)
    _text(manifest, "seal_sha256", pattern=HEX64_RE)
    _text(manifest, "name", optional=True)
    _text(manifest, "created_at", pattern=CREATED_RE)
    _text(manifest, "evalhouse_version")
    if not _count(manifest.get("schema_version")):
        raise SnapshotError("its 'schema_version' is missing or not a whole number")
    registry = manifest.get("registry")
    if not isinstance(registry, dict) or not isinstance(registry.get("version"), str):
        raise SnapshotError("its 'registry' section has no version")
    files = manifest.get("files")
    _check_files(files)
    tables = manifest.get("tables")
    if not isinstance(tables, dict) or len(tables) > MAX_RELATIONS:
        raise SnapshotError(f"its 'tables' section is missing, not an object or larger than {MAX_RELATIONS}")
    for name, entry in tables.items():
        _check_relation(name, entry)
    return manifest
