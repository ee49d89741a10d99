"""What the nightly job installs: the core's site-packages against everything 'make test' installs.

`make run` installs the core only (`pip install -c requirements.lock -e .`); pyspark, playwright,
statsmodels, the wordllama encoder and the test tools are extras that `make test` adds. This builds
a scratch venv of the core from the lock (about 2 minutes), measures its site-packages, and prints
it next to the full `.venv`'s and the target (1 GB). Usage: `.venv/bin/python benchmarks/install_size.py`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET = 1_000_000_000
BEFORE = 1_700_000_000  # the single install every target made before the core/extras split (1.7 GB)
ABSENT = ("pyspark", "playwright", "statsmodels", "wordllama", "hypothesis", "pytest")


def tree_bytes(root: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = Path(dirpath, name)
            if not path.is_symlink():
                total += path.stat().st_size
    return total


def site_packages(venv: Path) -> Path:
    rel = Path(sysconfig.get_path("purelib")).relative_to(
        sys.base_prefix if sys.prefix == sys.base_prefix else sys.prefix
    )
    return venv / rel


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="evalhouse-core-venv-") as tmp:
        venv = Path(tmp) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        done = subprocess.run(
            [*pip, "-c", str(REPO / "requirements.lock"), "-e", str(REPO)], capture_output=True, text=True, check=False
        )
        if done.returncode:
            print(done.stderr[-4000:], file=sys.stderr)
            return 2
        core_dir = site_packages(venv)
        core = tree_bytes(core_dir)
        present = [name for name in ABSENT if (core_dir / name).exists()]
    full_dir = site_packages(REPO / ".venv")
    full = tree_bytes(full_dir) if full_dir.is_dir() else None
    gb = 1e9
    print(
        f"core install (make run): {core / gb:.2f} GB of site-packages; target {TARGET / gb:.1f} GB "
        f"-> {core / TARGET:.2f}x the target, {core / BEFORE:.2f}x the 1.7 GB every target installed before"
    )
    if full is not None:
        print(f"full install (make test): {full / gb:.2f} GB; the extras add {(full - core) / gb:.2f} GB")
    print("extras absent from the core:", "all" if not present else f"NOT: {', '.join(present)}")
    return 0 if core <= TARGET and not present else 1


if __name__ == "__main__":
    raise SystemExit(main())
