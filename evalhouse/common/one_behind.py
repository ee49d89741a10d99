"""One job in flight on a worker thread while the caller prepares the next.

A load alternates between Python (parsing, fingerprints, identity, building rows) and DuckDB
inserting a batch, which releases the interpreter. On one thread each waits for the other; with
:class:`OneBehind` a batch's inserts run on a worker while the next batch is prepared, on the
machine's second core. One job at a time: memory holds one batch more, not the input, and the
worker is the only user of the connection until the caller waits for it (a DuckDB connection
serves one thread at a time, and the load's transaction is that connection's).

Measured on a 10^5-score EEE import (benchmarks/load.py's corpus, this repository's 2-core
machine): 7.4-7.6 s wall before, 6.7-6.9 s with the inserts one batch behind; CPU time unchanged.
Reading files ahead of the parser on a thread the same way was measured too, and was slower.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor


class OneBehind:
    """Runs jobs on one worker thread, one at a time, while the caller goes on.

    :meth:`submit` first waits for the job before it, so at most one is in flight; :meth:`wait`
    returns once none is (raising the job's exception, if it failed); :meth:`close` waits and ends
    the thread. :meth:`abandon` is for a caller failing already: it waits too, and a failure of
    the job is noted on the caller's exception rather than replacing it. No failure is dropped.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._pool: ThreadPoolExecutor | None = None
        self._pending: Future[None] | None = None

    def submit(self, job: Callable[[], None]) -> None:
        self.wait()
        if self._pool is None:
            self._pool = ThreadPoolExecutor(1, thread_name_prefix=self.name)
        self._pending = self._pool.submit(job)

    def wait(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def close(self) -> None:
        try:
            self.wait()
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None

    def abandon(self, cause: BaseException) -> None:
        try:
            self.close()
        except Exception as exc:  # noqa: BLE001 - the caller's exception is raised; this one is kept on it
            cause.add_note(f"{self.name}: the job in flight failed too: {type(exc).__name__}: {exc}")
