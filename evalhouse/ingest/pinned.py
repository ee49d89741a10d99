"""A replay mirror built from the recorded real payloads: the pinned datasets beside the checkout
(``../shared``) and the recorded fixtures of every verified source (``tests/fixtures``).

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
from evalhouse.ingest.mirror import MirrorKey, build_mirror
from evalhouse.ingest.recordings import DEFAULT_FIXTURES, Roots, replay_payloads

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


def mirror_from_shared(shared: Path, out_dir: Path, fixtures: Path | None = None) -> dict[MirrorKey, Path]:
    """Write a replay mirror of every verified source from the recorded payloads; returns url (or
    (url, POST body)) -> file.

    Epoch's zip and the AA page are built from the pinned datasets in ``shared``; every other
    verified source's recorded files (``tests/fixtures`` or ``shared``) are placed at the URLs they
    stand for. A source whose recorded files are absent is left out, and a refresh replaying the
    mirror reports it ``skipped``.
    """
    shared = Path(shared)
    roots = Roots(fixtures=Path(fixtures) if fixtures is not None else DEFAULT_FIXTURES, shared=shared)
    replay = replay_payloads(roots)
    payloads = dict(replay.payloads)
    aa = shared / AA_CSV
    pinned = (shared / EPOCH_DIR).is_dir() and aa.is_file()
    if pinned:
        payloads[EPOCH_URL] = epoch_zip(shared / EPOCH_DIR)
        payloads[AA_PAGE_URL] = aa.read_bytes()
    if not payloads:
        raise PinnedDataMissing(
            f"no recorded payloads found: {shared} does not hold the pinned datasets ({EPOCH_DIR}, {AA_CSV})"
            f" and {roots.fixtures} holds no recorded source files"
        )
    written = build_mirror(out_dir, payloads)
    lines = ["Replay mirror built by 'evalhouse mirror from-shared' from recorded real payloads:"]
    if pinned:
        lines += [
            f"- {EPOCH_URL}: the 43 Epoch CSVs in {shared / EPOCH_DIR}, zipped",
            f"- {AA_PAGE_URL}: the paper-000 AA CSV (the parser reads it by its content)",
        ]
    lines += [f"- {key}: its recorded files (see 'evalhouse sources')" for key in replay.sources]
    lines += [f"- {key}: left out, {why}" for key, why in sorted(replay.missing.items())]
    (Path(out_dir) / "MIRROR.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return written
