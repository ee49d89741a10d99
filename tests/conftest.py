"""Shared fixtures: the ../shared data beside the checkout, and a real warehouse file per test."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cpu_account
import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("EVALHOUSE_SHARED", REPO.parent / "shared"))
# Compiled package YAML (evalhouse.common.yamls) goes to a folder of the test run, not the user's
# cache; subprocesses of the CLI inherit it.
if "EVALHOUSE_CACHE_DIR" not in os.environ:
    os.environ["EVALHOUSE_CACHE_DIR"] = _cache = tempfile.mkdtemp(prefix="evalhouse-test-cache-")
    atexit.register(shutil.rmtree, _cache, ignore_errors=True)
# A command a test runs without --db writes to a warehouse of the test run, never the user's
# ./warehouse.duckdb (tests that check the default unset it themselves).
if "EVALHOUSE_DB" not in os.environ:
    _run_dir = tempfile.mkdtemp(prefix="evalhouse-test-db-")
    os.environ["EVALHOUSE_DB"] = str(Path(_run_dir) / "warehouse.duckdb")
    atexit.register(shutil.rmtree, _run_dir, ignore_errors=True)
# Under pytest-xdist the workers are the parallelism (three on this two-core machine): each runs
# DuckDB's queries and OpenBLAS on one thread, as a user running jobs side by side would
# ($EVALHOUSE_THREADS, docs/operations.md). Otherwise every worker's DuckDB and OpenBLAS start a
# thread per core, and the threads share the cores twice over: a third more CPU for the same work
# (docs/development.md). OpenBLAS reads its setting when numpy loads, which is after this.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _name in ("EVALHOUSE_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        os.environ.setdefault(_name, "1")
#: What a test run must leave as it found it: the user's warehouse and the build folder.
UNTOUCHED = ("warehouse.duckdb", "warehouse.raw", "warehouse.snapshots", "build")


def _state(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under the checkout's user-owned paths, with its size and modification time."""
    out: dict[str, tuple[int, int]] = {}
    for name in UNTOUCHED:
        path = root / name
        files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else []
        for f in files:
            st = f.stat()
            out[str(f.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    return out


def pytest_configure(config: pytest.Config) -> None:
    """The CPU of each test and of the run, when asked (``make test-cpu``: ``tests/cpu_account.py``)."""
    if not config.pluginmanager.has_plugin("cpu_account"):
        config.pluginmanager.register(cpu_account, "cpu_account")


def pytest_report_header() -> str:
    from sizes import describe

    return describe()


#: Modules that run long for their number of tests (worker seconds of one CI-profile run, 2026-12-05).
#: pytest-xdist hands modules out by their number of tests, most first, so these would start last
#: and keep one worker busy after the others are done (test_crash's two tests alone made a 76 s
#: tail). The Makefile passes ``--no-loadscope-reorder``: modules go out in collection order, which
#: is these first (the fault matrix, the longest, at the head), then every other module in
#: xdist's own order, most tests first (docs/development.md, "The order modules run in").
FIRST_MODULES = (
    "tests/faults/test_http_faults.py",  # 349 s, 26 tests (waits on loopback timeouts, not the CPU)
    "tests/faults/test_crash.py",  # 98 s, 2 tests
    "tests/items/test_items_audit.py",  # 68 s, 10 tests (Spark)
    "tests/cli/test_processes.py",  # 63 s, 6 tests
    "tests/faults/test_concurrency.py",  # 62 s, 3 tests
    "tests/ingest/test_leaderboard_sources.py",  # 38 s, 5 tests
    "tests/analytics/report/test_report_equate.py",  # 35 s, 4 tests
)


def _module(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """:data:`FIRST_MODULES` first, in that order; then the other modules, most tests first (a
    stable sort: a module's tests stay together and in their order)."""
    rank = {name: i for i, name in enumerate(FIRST_MODULES)}
    counts = Counter(_module(item) for item in items)
    items.sort(key=lambda item: (rank.get(_module(item), len(rank)), -counts[_module(item)]))


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_BEFORE] = _state(REPO)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when a test wrote to ./warehouse.duckdb or build/ (the user's, not the tests')."""
    before = session.config.stash.get(_BEFORE, None)
    if before is None or hasattr(session.config, "workerinput"):  # an xdist worker: the controller checks
        return
    after = _state(REPO)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    if changed:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(f"tests wrote outside their temporary folders: {', '.join(changed[:10])}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


_BEFORE = pytest.StashKey[dict[str, tuple[int, int]]]()


@pytest.fixture(scope="session")
def shared() -> Path:
    """The read-only ../shared folder; tests that need it skip with a clear message when absent."""
    if not (SHARED / "datasets").is_dir():
        pytest.skip(f"../shared is not beside the checkout (looked in {SHARED}); set EVALHOUSE_SHARED")
    return SHARED


@pytest.fixture(scope="session")
def aa_csv(shared: Path) -> Path:
    return shared / "datasets" / "artificial-analysis-2026-07-06" / "aa_models_raw_parsed.csv"


@pytest.fixture(scope="session")
def epoch_dir(shared: Path) -> Path:
    return shared / "datasets" / "epoch-benchmarks-2025-11"


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], Path]) -> Path:
    """``build(folder)``'s result, built once per test run however many xdist workers ask for it.

    The folder sits in the run's temporary root, which every worker shares (a worker's own root is
    one level down); a file lock makes the other workers wait for the first build and read its
    result. A build that failed half way is started again from an empty folder by the next asker.
    """
    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = root / f"once-{name}"
    with FileLock(f"{folder}.lock"):
        done = folder / ".built"
        if done.exists():
            return Path(done.read_text(encoding="utf-8"))
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        result = build(folder)
        done.write_text(str(result), encoding="utf-8")
    return result


@pytest.fixture(scope="session")
def real_warehouse(shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Epoch + Artificial Analysis through the real refresh over loopback (read it; copy to write).

    Refreshed once per test run; each worker reads its own copy (file, raw store, and the mirror it
    was refreshed from, which :mod:`meeting_corpus` serves again)."""
    from realwarehouse import build, copy_warehouse

    built = built_once(tmp_path_factory, "real-warehouse", lambda folder: build(shared, folder))
    root = tmp_path_factory.mktemp("real-warehouse")
    (root / "mirror").symlink_to(built.parent / "mirror", target_is_directory=True)
    return copy_warehouse(built, root)


@pytest.fixture(scope="session")
def real_warehouse_with_legacy(real_warehouse: Path, shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """:func:`real_warehouse` with the legacy EEE datastore imported beside it by the real command,
    built once per test run (read it; copy it to write)."""
    from realwarehouse import copy_warehouse, import_legacy

    def build(folder: Path) -> Path:
        return import_legacy(shared, copy_warehouse(real_warehouse, folder))

    return built_once(tmp_path_factory, "real-warehouse-legacy", build)


@pytest.fixture(scope="session")
def legacy_imported_twice(shared: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The legacy EEE datastore imported twice into a new warehouse (:func:`eee_digest.import_twice`),
    built once per test run: both imports' results, the row counts after each, and ``db``, this
    worker's copy of the warehouse (read it; copy it again to write)."""
    import pickle

    from eee_digest import LEGACY, import_twice
    from realwarehouse import copy_warehouse

    tree = shared / LEGACY
    if not (tree / "data").is_dir():
        pytest.skip(f"{tree} is not there")

    def build(folder: Path) -> Path:
        db = folder / "w.duckdb"
        (folder / "results.pickle").write_bytes(pickle.dumps(import_twice(tree, db)))
        return db

    built = built_once(tmp_path_factory, "legacy-twice", build)
    twice = pickle.loads((built.parent / "results.pickle").read_bytes())
    return {**twice, "db": copy_warehouse(built, tmp_path_factory.mktemp("legacy-twice"))}


@pytest.fixture(scope="session")
def real_snapshot(real_warehouse: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A snapshot of a copy of :func:`real_warehouse` (creating one records it in the warehouse),
    created once per test run and read by every worker."""
    from realwarehouse import copy_warehouse, snapshot

    def create(folder: Path) -> Path:
        return snapshot(copy_warehouse(real_warehouse, folder / "db"), folder / "snap")

    return built_once(tmp_path_factory, "real-snapshot", create)


@pytest.fixture(scope="session")
def browser():
    """One Chromium (Playwright, sync) for every browser test of a worker: a second sync_playwright
    in the same process while this one is open is refused by Playwright, so every test uses this one."""
    from sitebrowser import chromium

    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extra ('make test')")
    executable = chromium()
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield b
        b.close()
