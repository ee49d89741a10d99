"""A load process starts OpenBLAS with one thread (no spinning pool); a user's own setting stays."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

COUNT_THREADS = (
    "import os, sys; from evalhouse.config import serial_blas\n"
    "if sys.argv[1] == 'load': serial_blas()\n"
    "import numpy\n"
    "print(len(os.listdir('/proc/self/task')), os.environ.get('OPENBLAS_NUM_THREADS'))"
)


def threads_after_numpy(mode: str, **env: str) -> tuple[int, str]:
    # OpenBLAS falls back on GOTO_NUM_THREADS and OMP_NUM_THREADS (the suite's workers set one)
    ours = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
    clean = {k: v for k, v in os.environ.items() if k not in ours} | env
    out = subprocess.run(
        [sys.executable, "-c", COUNT_THREADS, mode], capture_output=True, text=True, check=True, env=clean
    ).stdout.split()
    return int(out[0]), out[1]


@pytest.mark.skipif(not os.path.isdir("/proc/self/task") or (os.cpu_count() or 1) < 2, reason="needs Linux, 2+ cores")
def test_a_load_starts_numpy_without_openblas_worker_threads_unless_the_user_set_them() -> None:
    analysis_threads, analysis_setting = threads_after_numpy("analysis")
    load_threads, load_setting = threads_after_numpy("load")
    assert (load_setting, analysis_setting) == ("1", "None")
    assert load_threads < analysis_threads  # OpenBLAS's pool is not started
    assert threads_after_numpy("load", OPENBLAS_NUM_THREADS="2")[1] == "2"  # the user's choice stands
