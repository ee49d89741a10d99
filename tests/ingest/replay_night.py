"""One refresh of one source replaying exactly its recorded files, through the real client.

``replay_night(spec, root)`` places the source's ``verified_on.replay`` files at their live URLs in
a mirror tree, serves it from a real HTTP server on 127.0.0.1 and runs ``refresh`` of that source
into a fresh warehouse; it returns the run's result and the open warehouse. The tests of the
sources verified on recorded fixtures use it, then count the cells in the recorded bytes
themselves and compare.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from httpserver import serve

from evalhouse.ingest.http import HttpClient
from evalhouse.ingest.mirror import build_mirror
from evalhouse.ingest.recordings import Roots, replay_payloads
from evalhouse.ingest.source import SourceSpec
from evalhouse.pipeline import refresh as R
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.load import ledger
from evalhouse.warehouse.raw.store import RawStore

FAST = {"backoff_base": 0.001, "backoff_max": 0.01, "timeout": 2.0, "trust_env": False, "max_retries": 0}
SCORES = (
    "SELECT e.model_source_id AS model, s.benchmark_id AS benchmark, s.metric_id AS metric,"
    " s.metric_raw, s.evaluation_result_id AS result_id, s.raw_value, s.evaluated_by, s.setup"
    " FROM score s JOIN evaluation e USING (evaluation_id) WHERE s.source_key = ?"
)


@contextmanager
def replay_night(spec: SourceSpec, root: Path) -> Iterator[tuple[ledger.RunResult, Warehouse]]:
    replay = replay_payloads(Roots(), [spec])
    assert replay.sources == [spec.key], replay.missing
    build_mirror(root / "m" / "m", replay.payloads)

    def client(mirror: str | None) -> HttpClient:
        return HttpClient(mirror=mirror, **FAST)

    with serve(static_dir=root / "m") as srv:
        wh = Warehouse.open(root / "w.duckdb")
        options = R.RefreshOptions(mirror=f"{srv.url}/m", client_factory=client)
        (result,) = R.refresh(wh, RawStore(root / "raw"), [spec.key], options)
    with wh:
        yield result, wh


def scores(wh: Warehouse, key: str) -> list[dict[str, Any]]:
    """Every loaded score of ``key``: model id, benchmark id, metric id, metric_raw, result_id (the
    parser's key of the cell: the source's own column or field), raw value, evaluated_by and setup (JSON text)."""
    cursor = wh.con.execute(SCORES, [key])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
