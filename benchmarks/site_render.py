"""What rendering an explorer site costs with Jinja's own attribute lookup, and with the site's.

Templates read rows as ``row.name``. On a plain dict row Jinja tries the attribute first, which
raises an AttributeError, then reads the key; ``evalhouse.site.build._RowEnvironment`` reads a
name that is not one of a dict's own attributes as a key at once (the same result, missing keys
included). This script builds the warehouse a user has after a night's refresh of the pinned
sources (from a mirror of ../shared) with the legacy EEE datastore imported, freezes it, and then
builds the same site (``analyses=False``) in this process, alternating:

1. the baseline: the shipped templates under a stock ``jinja2.Environment``;
2. the site as shipped.

It prints the median CPU and wall time of each, their ratio, and whether every page is the same,
byte for byte.

Usage: `.venv/bin/python benchmarks/site_render.py [path/to/shared]`.
"""

from __future__ import annotations

import filecmp
import statistics
import sys
import tempfile
import time
from pathlib import Path

import jinja2

import evalhouse
from evalhouse import House
from evalhouse.site import build

PINNED = ("epoch-benchmarks", "artificial-analysis")
LEGACY = "datasets/eee-datastore-legacy"
RUNS = 3


def _same_tree(a: Path, b: Path) -> tuple[int, list[str]]:
    """How many pages the two sites hold, and the files that differ (the build record, which names
    its own folder, aside)."""
    differ: list[str] = []
    pages = 0
    for path in sorted(a.rglob("*")):
        rel = path.relative_to(a)
        if path.is_dir() or rel.name == ".evalhouse-site.json":
            continue
        pages += path.suffix == ".html"
        other = b / rel
        if not other.is_file() or not filecmp.cmp(path, other, shallow=False):
            differ.append(str(rel))
    differ += [str(p.relative_to(b)) for p in b.rglob("*") if p.is_file() and not (a / p.relative_to(b)).exists()]
    return pages, differ


def main(shared: Path) -> None:
    if not (shared / LEGACY / "data").is_dir():
        sys.exit(f"{shared / LEGACY} is not there: pass the path to ../shared")
    root = Path(tempfile.mkdtemp(prefix="evalhouse-site-render-"))
    mirror = root / "mirror"
    evalhouse.mirror_from_shared(mirror, shared=shared)
    house = House.open(root / "w.duckdb")
    house.refresh(PINNED, mirror=str(mirror))
    house.import_eee(shared / LEGACY)
    snap = house.create_snapshot(root / "snap", name="bench")
    shipped = build._RowEnvironment
    times: dict[str, list[tuple[float, float]]] = {"stock": [], "shipped": []}
    for run in range(RUNS):
        for label, env in (("stock", jinja2.Environment), ("shipped", shipped)):
            build._RowEnvironment = env  # our own module's name: the stock class for the baseline
            out = root / f"{label}-{run}"
            w0, c0 = time.perf_counter(), time.process_time()
            house.site(out, snapshot=snap.path, analyses=False)
            times[label].append((time.perf_counter() - w0, time.process_time() - c0))
    build._RowEnvironment = shipped
    pages, differ = _same_tree(root / "stock-0", root / "shipped-0")
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in times.items()}
    print(f"site of the pinned sources + the legacy datastore: {pages:,} pages, median of {RUNS} builds each")
    for label, name in (("stock", "stock jinja2.Environment (baseline)"), ("shipped", "as shipped")):
        print(f"{name:<38}{med[label][0]:7.2f} s wall {med[label][1]:7.2f} s CPU")
    print(
        f"ratio: {med['stock'][1] / med['shipped'][1]:.2f}x less CPU, {med['stock'][0] / med['shipped'][0]:.2f}x "
        f"less wall; pages identical: {'yes' if not differ else 'NO: ' + ', '.join(differ[:5])}"
    )
    if differ:
        sys.exit(1)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared")
