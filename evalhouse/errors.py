"""One exception hierarchy for evalhouse, and the exit code each kind maps to.

Every error evalhouse raises on purpose derives from :class:`EvalhouseError`, so a caller (the
CLI, a notebook, a cron wrapper) can catch the project's errors without catching everything. Two
branches say who has to act:

* :class:`InputError` — the caller asked for something that cannot be done as asked (a bad file,
  an unknown name, a malformed option). The CLI exits **2**.
* everything else (:class:`RunFailed`, :class:`WarehouseError` ...) — the request was fine but the
  work failed (a source failed, a check failed, the warehouse is locked). The CLI exits **1**.

Exceptions keep the standard base they always had (``ValueError``, ``LookupError`` ...) as a
second parent, so ``except ValueError`` in older code still works.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class EvalhouseError(Exception):
    """Base of every error evalhouse raises on purpose."""

    exit_code: int = EXIT_FAILED


class InputError(EvalhouseError, ValueError):
    """Bad input or usage: a file that cannot be read as asked, an unknown name, a bad option."""

    exit_code = EXIT_USAGE


class NotFound(InputError, LookupError):
    """A named thing (model, score, source, snapshot) does not exist."""


class RunFailed(EvalhouseError, RuntimeError):
    """A run, a load or a check failed; the request itself was valid."""


class DataMissing(RunFailed, LookupError):
    """An analysis needs data the warehouse or snapshot does not hold (the message says how to load it)."""


class WarehouseError(RunFailed):
    """A problem with the warehouse file itself (lock, migrations, version)."""


class WarehouseLocked(WarehouseError):
    """Another process holds the writer lock; the message names it."""


class CommitFailed(WarehouseError):
    """A transaction's COMMIT failed, so nothing it wrote is kept. When DuckDB invalidated the
    database (it does so when a commit runs out of memory), the warehouse was reopened as it was
    before the transaction; ``out_of_memory`` says whether memory was the reason."""

    def __init__(self, message: str, *, out_of_memory: bool = False, reopened: bool = False) -> None:
        super().__init__(message)
        self.out_of_memory = out_of_memory
        self.reopened = reopened


class MigrationError(WarehouseError):
    """A migration was edited after it was applied, or the file is newer than this evalhouse."""


def exit_code(exc: BaseException) -> int:
    """The CLI exit code for an exception (1 for anything that is not an evalhouse error)."""
    return exc.exit_code if isinstance(exc, EvalhouseError) else EXIT_FAILED


class DiskFull(RunFailed):
    """A write ran out of room (no space left, quota exceeded, or the file size limit): nothing of
    what was being written is kept; the message names where."""
