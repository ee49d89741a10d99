"""The Python API's notebook example (docs/python-api.md), run as it is written (paths pointed at a
scratch folder and at ../shared), against the real pinned data replayed from a local mirror."""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

from evalhouse.ingest.pinned import mirror_from_shared

API_DOC = Path(__file__).resolve().parents[1] / "docs" / "python-api.md"


def readme_example() -> str:
    return re.search(r"```python\n(.*?)```", API_DOC.read_text(), re.S).group(1)


def test_the_readme_example_runs_and_prints_what_it_says(shared: Path, tmp_path: Path) -> None:
    mirror_from_shared(shared, tmp_path / "build" / "mirror")
    code = readme_example().replace("../shared", str(shared))
    printed = io.StringIO()
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(code, "README.md", "exec"), {})
    finally:
        os.chdir(cwd)
    lines = printed.getvalue().splitlines()
    assert lines[0] in (
        "{'epoch-benchmarks': 'completed', 'artificial-analysis': 'completed'}",
        "{'epoch-benchmarks': 'partial', 'artificial-analysis': 'completed'}",
    )
    assert lines[1] == "2792 records"
    top = eval(lines[2])
    assert len(top) == 3 and all(0 < v <= 1 for _, v in top)
    assert lines[3] == "qwen/qwen-2.5-72b-instruct"
    rows, cols = eval(lines[4])
    assert cols == 2 and rows >= 5


def test_the_public_names_are_importable_from_one_place() -> None:
    import evalhouse

    for name in ("connect", "open_snapshot", "snapshot_frame", "refresh", "import_eee", "resolve_model",
                 "EFA", "ParallelAnalysis", "Omega", "PredictionLadder", "CharacteristicCurveEquating",
                 "BalanceOfBenchmarks"):  # fmt: skip
        assert callable(getattr(evalhouse, name)), name
    assert set(evalhouse.__all__) >= {"connect", "EFA", "BalanceOfBenchmarks"}
