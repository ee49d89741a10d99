"""A replay mirror built from the pinned datasets beside the checkout (``../shared``).

The nightly refresh replays a mirror instead of the live hosts with ``--mirror``. A mirror is
normally written from a real night's raw store (``evalhouse mirror export``); on a machine that
has never been online, this builds one from the pinned exports instead:

* Epoch AI: the 43 pinned CSVs zipped as ``benchmark_data.zip`` (the live export is exactly a zip
  of these per-benchmark CSVs; members sorted, fixed timestamps, so the bytes are stable);
* Artificial Analysis: the paper-000 CSV (548 configurations, 2026-07-06) placed at the
  leaderboard page's URL. The pinned page itself is not in ``../shared``; the parser tells the
  three AA forms apart by content, so it reads the CSV there as what it is.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from evalhouse.errors import InputError
from evalhouse.ingest.mirror import build_mirror

EPOCH_DIR = "datasets/epoch-benchmarks-2025-11"
AA_CSV = "datasets/artificial-analysis-2026-07-06/aa_models_raw_parsed.csv"
EPOCH_URL = "https://epoch.ai/data/benchmark_data.zip"
AA_PAGE_URL = "https://artificialanalysis.ai/leaderboards/models"


class PinnedDataMissing(InputError, FileNotFoundError):
    """The pinned datasets folder (../shared) is not where it was looked for."""


def epoch_zip(csv_dir: Path) -> bytes:
    """The Epoch export zip from a folder of its CSVs, byte-stable across runs."""
    files = sorted(csv_dir.glob("*.csv"))
    if not files:
        raise PinnedDataMissing(f"no Epoch CSVs in {csv_dir}")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in files:
            info = zipfile.ZipInfo(path.name, date_time=(2025, 11, 2, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, path.read_bytes())
    return buf.getvalue()


def mirror_from_shared(shared: Path, out_dir: Path) -> dict[str, Path]:
    """Write a mirror of both default sources' URLs from ``shared``; returns url -> file."""
    shared = Path(shared)
    aa = shared / AA_CSV
    if not (shared / EPOCH_DIR).is_dir() or not aa.is_file():
        raise PinnedDataMissing(f"{shared} does not hold the pinned datasets ({EPOCH_DIR}, {AA_CSV})")
    written = build_mirror(out_dir, {EPOCH_URL: epoch_zip(shared / EPOCH_DIR), AA_PAGE_URL: aa.read_bytes()})
    (Path(out_dir) / "MIRROR.md").write_text(
        "Replay mirror built by 'evalhouse mirror from-shared' from the pinned datasets in "
        f"{shared}:\n- {EPOCH_URL}: the 43 Epoch CSVs zipped\n- {AA_PAGE_URL}: the paper-000 AA CSV "
        "(the pinned page is not available; the parser reads the CSV by its content)\n",
        encoding="utf-8",
    )
    return written
