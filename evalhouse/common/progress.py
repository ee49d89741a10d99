"""Progress of long steps, reported to whoever displays it (a bar on a terminal, log lines in cron).

A long-running step says what it does and how far it got; it never prints. The command line
installs a :class:`Reporter` for the duration of a command (:func:`reporting`); without one,
:func:`task` is a no-op, so library callers (a notebook, a test) see nothing::

    with progress.task("snapshot: tables", total=len(rels)) as step:
        for rel in rels:
            write(rel)
            step.advance()

This is display state only, held in a context variable: no result depends on it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol


class Reporter(Protocol):
    """What displays progress: one task at a time may be open per label."""

    def begin(self, label: str, total: int | None) -> object: ...

    def update(self, handle: object, *, done: int, total: int | None, note: str | None) -> None: ...

    def end(self, handle: object) -> None: ...


_reporter: ContextVar[Reporter | None] = ContextVar("evalhouse_progress", default=None)


class Task:
    """One step's counter; :meth:`advance` and :meth:`note` are cheap no-ops without a reporter."""

    def __init__(self, reporter: Reporter | None, label: str, total: int | None) -> None:
        self.reporter, self.label, self.total, self.done = reporter, label, total, 0
        self._note: str | None = None
        self._handle = reporter.begin(label, total) if reporter is not None else None

    def advance(self, n: int = 1, note: str | None = None) -> None:
        self.done += n
        if note is not None:
            self._note = note
        self._push()

    def note(self, text: str) -> None:
        """Say what is being done now (a source key, a file, a table) without counting."""
        self._note = text
        self._push()

    def set_total(self, total: int | None) -> None:
        self.total = total
        self._push()

    def _push(self) -> None:
        if self.reporter is not None:
            self.reporter.update(self._handle, done=self.done, total=self.total, note=self._note)


@contextmanager
def task(label: str, total: int | None = None) -> Iterator[Task]:
    """A counted step reported to the active reporter (if any) while the block runs."""
    reporter = _reporter.get()
    step = Task(reporter, label, total)
    try:
        yield step
    finally:
        if reporter is not None:
            reporter.end(step._handle)


def each[T](
    items: Iterable[T],
    label: str,
    *,
    total: int | None = None,
    size: Callable[[T], int] | None = None,
    note: Callable[[T], str] | None = None,
) -> Iterator[T]:
    """Iterate ``items`` as a counted step: ``size(item)`` units each (default 1), ``note(item)``
    shown while it is worked on. A drop-in for a ``for`` loop's iterable."""
    with task(label, total) as step:
        for item in items:
            if note is not None:
                step.note(note(item))
            yield item
            step.advance(size(item) if size is not None else 1)


@contextmanager
def reporting(reporter: Reporter | None) -> Iterator[None]:
    """Make ``reporter`` receive every :func:`task` opened inside the block (``None``: silence)."""
    token = _reporter.set(reporter)
    try:
        yield
    finally:
        _reporter.reset(token)
