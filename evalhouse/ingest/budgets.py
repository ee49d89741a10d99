"""Budgets for what one payload may become once read: archives inflated and samples files split.

A 7 MB zip can hold 8 members of 900 MB each (deflate reaches 1,000:1), every one under a
per-member cap, and a line-delimited file can hold one 400 MB line; either would take gigabytes
to read. So every archive and every samples file is read against totals, streamed, and refused
the moment it passes one — with an error that names the budget and how to raise it:

=========================  =====================================  ==========================
budget                     what it bounds                         default (environment)
=========================  =====================================  ==========================
archive bytes              all members of one zip, inflated       256 MiB (``$EVALHOUSE_ARCHIVE_BYTES``)
archive lines              newlines in all members of one zip     2,000,000 (``$EVALHOUSE_ARCHIVE_LINES``)
archive members            members of one zip                     200,000
samples bytes              one ``*.jsonl`` samples file           512 MiB (``$EVALHOUSE_SAMPLES_BYTES``)
samples lines              lines of one samples file              2,000,000 (``$EVALHOUSE_SAMPLES_LINES``)
line bytes                 one line of a samples file             16 MiB (``$EVALHOUSE_LINE_BYTES``)
=========================  =====================================  ==========================

An archive's declared sizes are summed before anything is inflated (Python's ``zipfile`` never
inflates a member past the size its directory declares, so the sum bounds the work), and each
member is then inflated in chunks, counting bytes and newlines as they come. A samples file's
size is known before it is read; its lines are counted and cut one at a time, and a line over the
line budget is refused alone (a quarantine row naming it) without being decoded, so its
neighbours still load. A payload over an archive or file budget is refused whole.
"""

from __future__ import annotations

import io
import os
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from evalhouse.ingest.source import ParseError

MiB = 1024 * 1024
ENV_ARCHIVE_BYTES = "EVALHOUSE_ARCHIVE_BYTES"
ENV_ARCHIVE_LINES = "EVALHOUSE_ARCHIVE_LINES"
ENV_SAMPLES_BYTES = "EVALHOUSE_SAMPLES_BYTES"
ENV_SAMPLES_LINES = "EVALHOUSE_SAMPLES_LINES"
ENV_LINE_BYTES = "EVALHOUSE_LINE_BYTES"
ARCHIVE_BYTES = 256 * MiB
ARCHIVE_LINES = 2_000_000
ARCHIVE_MEMBERS = 200_000
SAMPLES_BYTES = 512 * MiB
SAMPLES_LINES = 2_000_000
LINE_BYTES = 16 * MiB
#: Bytes inflated per read while a member is streamed.
CHUNK = 1 * MiB


class BudgetExceeded(ParseError):
    """A payload passed one of its budgets; the message names the budget and how to raise it."""


def _size(env: str, default: int) -> int:
    text = os.environ.get(env, "").strip()
    if not text:
        return default
    from evalhouse.warehouse.memory_budget import size_in_bytes  # noqa: PLC0415 - only when set

    try:
        value = size_in_bytes(text)
    except ValueError:
        raise BudgetExceeded(f"${env}={text!r} is not a size such as 512MB or 2GiB") from None
    if value <= 0:
        raise BudgetExceeded(f"${env}={text!r}: a budget must be more than 0 bytes")
    return value


def _count(env: str, default: int) -> int:
    text = os.environ.get(env, "").strip().replace("_", "").replace(",", "")
    if not text:
        return default
    if not text.isdigit() or int(text) <= 0:
        raise BudgetExceeded(f"${env}={os.environ[env]!r} is not a positive whole number of lines")
    return int(text)


@dataclass(frozen=True)
class Budgets:
    archive_bytes: int = ARCHIVE_BYTES
    archive_lines: int = ARCHIVE_LINES
    archive_members: int = ARCHIVE_MEMBERS
    samples_bytes: int = SAMPLES_BYTES
    samples_lines: int = SAMPLES_LINES
    line_bytes: int = LINE_BYTES

    @classmethod
    def from_env(cls) -> Budgets:
        """The defaults, each overridden by its environment variable when set."""
        return cls(
            archive_bytes=_size(ENV_ARCHIVE_BYTES, ARCHIVE_BYTES),
            archive_lines=_count(ENV_ARCHIVE_LINES, ARCHIVE_LINES),
            samples_bytes=_size(ENV_SAMPLES_BYTES, SAMPLES_BYTES),
            samples_lines=_count(ENV_SAMPLES_LINES, SAMPLES_LINES),
            line_bytes=_size(ENV_LINE_BYTES, LINE_BYTES),
        )


def _mib(n: int) -> str:
    return f"{n / MiB:,.0f} MiB" if n >= MiB else f"{n:,} bytes"


def _over(what: str, found: str, budget: str, env: str | None) -> BudgetExceeded:
    raise_it = f"; raise it with ${env} if the payload is genuine" if env else ""
    return BudgetExceeded(f"{what} {found}, more than the {budget} budget{raise_it}")


# -- archives ----------------------------------------------------------------------------------


def read_zip(
    body: bytes,
    *,
    what: str = "the zip",
    keep: Callable[[zipfile.ZipInfo], bool] | None = None,
    budgets: Budgets | None = None,
) -> list[tuple[str, bytes]]:
    """``(name, bytes)`` of every member ``keep`` selects (default: every file), inflated within
    the archive budgets; a bomb is refused by its declared sizes before anything is inflated.

    A truncated, corrupt or encrypted zip, or one over a budget, is a :class:`ParseError` naming why.
    """
    budgets = budgets or Budgets.from_env()
    try:
        with zipfile.ZipFile(io.BytesIO(body)) as zf:
            infos = [i for i in zf.infolist() if not i.is_dir() and (keep is None or keep(i))]
            if len(infos) > budgets.archive_members:
                raise _over(what, f"holds {len(infos):,} members", f"{budgets.archive_members:,}-member", None)
            declared = sum(i.file_size for i in infos)
            if declared > budgets.archive_bytes:
                biggest = max(infos, key=lambda i: i.file_size)
                raise _over(
                    what,
                    f"would inflate {len(body):,} bytes to {declared:,} ({len(infos):,} members, the largest "
                    f"{biggest.filename} {biggest.file_size:,})",
                    f"{_mib(budgets.archive_bytes)} archive",
                    ENV_ARCHIVE_BYTES,
                )
            return _inflate(zf, infos, what, budgets)
    except ParseError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, struct.error) as exc:
        raise ParseError(f"{what} is truncated or corrupt ({len(body):,} bytes): {exc}") from exc
    except (NotImplementedError, RuntimeError, ValueError, OSError) as exc:  # encrypted member, odd method
        raise ParseError(f"{what} cannot be read ({len(body):,} bytes): {type(exc).__name__}: {exc}") from exc


def _inflate(zf: zipfile.ZipFile, infos: list[zipfile.ZipInfo], what: str, budgets: Budgets) -> list[tuple[str, bytes]]:
    """Every member in chunks, counting inflated bytes and newlines against the budgets as they come."""
    out: list[tuple[str, bytes]] = []
    inflated = lines = 0
    for info in infos:
        parts: list[bytes] = []
        with zf.open(info) as member:
            while chunk := member.read(CHUNK):
                inflated += len(chunk)
                lines += chunk.count(b"\n")
                if inflated > budgets.archive_bytes:  # the declared sizes lied: stop at once
                    raise _over(
                        what,
                        f"inflates past {inflated:,} bytes",
                        f"{_mib(budgets.archive_bytes)} archive",
                        ENV_ARCHIVE_BYTES,
                    )
                if lines > budgets.archive_lines:
                    raise _over(
                        what,
                        f"holds more than {lines:,} lines (at {info.filename})",
                        f"{budgets.archive_lines:,}-line archive",
                        ENV_ARCHIVE_LINES,
                    )
                parts.append(chunk)
        out.append((info.filename, b"".join(parts)))
    return out


# -- line-delimited files ------------------------------------------------------------------------


def check_samples_size(size: int, what: str, budgets: Budgets | None = None) -> None:
    """Refuse a samples file over the samples-bytes budget before it is read."""
    budgets = budgets or Budgets.from_env()
    if size > budgets.samples_bytes:
        raise _over(what, f"is {size:,} bytes", f"{_mib(budgets.samples_bytes)} samples-file", ENV_SAMPLES_BYTES)


@dataclass(frozen=True)
class LongLine:
    """A line past the line budget: refused alone, never decoded."""

    size: int
    budget: int
    head: str  # its first bytes, for the quarantine row

    @property
    def reason(self) -> str:
        return (
            f"line of {self.size:,} bytes, more than the {_mib(self.budget)} line budget; refused unread"
            f" (raise it with ${ENV_LINE_BYTES} if the line is genuine)"
        )


def lines(data: bytes, what: str, budgets: Budgets | None = None) -> Iterator[tuple[int, bytes | LongLine]]:
    """``(line number, bytes)`` of each non-blank line of a line-delimited file (a line over the
    line budget as a :class:`LongLine`), cut one at a time; a file over the samples budgets is a
    :class:`BudgetExceeded` before any line is yielded. Lines end at ``\\n`` (a ``\\r`` before it
    is dropped), as JSON Lines defines them."""
    budgets = budgets or Budgets.from_env()
    check_samples_size(len(data), what, budgets)
    count = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    if count > budgets.samples_lines:
        raise _over(what, f"has {count:,} lines", f"{budgets.samples_lines:,}-line samples-file", ENV_SAMPLES_LINES)
    start, n, size = 0, 0, len(data)
    while start < size:
        end = data.find(b"\n", start)
        end = size if end < 0 else end
        n += 1
        length = end - start
        if length > budgets.line_bytes:
            yield n, LongLine(length, budgets.line_bytes, data[start : start + 2000].decode("utf-8", "replace"))
        else:
            line = data[start:end]
            if line.endswith(b"\r"):
                line = line[:-1]
            if line.strip():
                yield n, line
        start = end + 1
