"""OneBehind: one job in flight on a worker thread; its failure reaches the caller, never dropped."""

from __future__ import annotations

import threading
import time

import pytest

from evalhouse.common.one_behind import OneBehind


def test_a_job_runs_on_the_worker_while_the_caller_goes_on_and_wait_returns_when_it_is_done() -> None:
    started, release = threading.Event(), threading.Event()
    ran: list[str] = []

    def job() -> None:
        started.set()
        release.wait(5)
        ran.append(threading.current_thread().name)

    writes = OneBehind("test-writer")
    writes.submit(job)
    assert started.wait(5)
    assert ran == []  # the caller is here while the job is still running
    release.set()
    writes.close()
    assert len(ran) == 1 and ran[0].startswith("test-writer")
    assert not any(t.name.startswith("test-writer") for t in threading.enumerate())


def test_at_most_one_job_is_in_flight_and_jobs_run_in_order() -> None:
    live, most, order = [0], [0], []
    lock = threading.Lock()

    def job(n: int):
        def run() -> None:
            with lock:
                live[0] += 1
                most[0] = max(most[0], live[0])
            time.sleep(0.01)
            order.append(n)
            with lock:
                live[0] -= 1

        return run

    writes = OneBehind("test-writer")
    for n in range(6):
        writes.submit(job(n))
    writes.close()
    assert order == list(range(6)) and most[0] == 1


def test_a_failed_job_is_raised_where_the_caller_waits_and_at_the_next_submit() -> None:
    def boom() -> None:
        raise RuntimeError("disk on fire")

    writes = OneBehind("test-writer")
    writes.submit(boom)
    with pytest.raises(RuntimeError, match="disk on fire"):
        writes.wait()
    writes.submit(boom)
    with pytest.raises(RuntimeError, match="disk on fire"):
        writes.submit(lambda: None)  # the next job is not started on top of a failure
    writes.close()


def test_abandon_waits_and_keeps_the_callers_exception_noting_the_jobs_failure() -> None:
    done = threading.Event()

    def slow_failure() -> None:
        time.sleep(0.05)
        done.set()
        raise ValueError("insert refused")

    writes = OneBehind("test-writer")
    writes.submit(slow_failure)
    cause = KeyError("the caller's own failure")
    writes.abandon(cause)
    assert done.is_set()  # waited for the job: nothing runs on after the caller gives up
    assert any("insert refused" in note and "ValueError" in note for note in cause.__notes__)
    writes.abandon(KeyError("again"))  # nothing in flight: nothing noted, nothing raised
