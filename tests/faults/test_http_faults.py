"""Every HTTP and payload fault against every scheduled source, through the real refresh and client.

One warehouse gets a good night of all fourteen scheduled sources (the two pinned exports and the
twelve boards, real payloads from ../shared where they exist) replayed over loopback. Then, per
source, each fault of :data:`faultserver.FAULTS` (plus the source's own layout change) is served
in place of its payloads while the source refreshes together with a healthy neighbour. Each case
asserts: the exit code the CLI would give, the failing source's status and reason (or, for the
faults a client should ride out, that it recovered), the neighbour unchanged, no score or
evaluation row lost and every current value unchanged. After each source's faults ``audit verify``
passes, and after all of them ``validate``. The last test greps every table, the raw store, a
snapshot and the output for the secrets planted in the mirror URL, the API keys and an ingest URL.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import httpx
import pytest
from clirunner import CliRunner
from faultserver import CRAWL_SETTINGS, DEADLINE, FAULTS, HTTP_POLICY, Context, Fault
from httpserver import Reply, ScriptedServer, serve

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ingest"))

from fixture_mirror import ENV, payloads
from test_drift_guards import LAYOUT, _path

from evalhouse.cli import app
from evalhouse.ingest.http import HttpClient
from evalhouse.ingest.mirror import MirrorKey, build_mirror, mirror_relpath
from evalhouse.ingest.pinned import AA_CSV, AA_PAGE_URL, EPOCH_DIR, EPOCH_URL, epoch_zip
from evalhouse.ingest.sources import llm_stats, mercor_eval
from evalhouse.pipeline import refresh as R
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore

runner = CliRunner()
#: Every scheduled source, verified on real bytes or not: the faults are about the fetch, not the parser.
SOURCES = [m.SOURCE.key for m in (*R.scheduled_sources(), *R.unverified_sources())]
#: Planted secrets: the mirror URL's password, the API keys, an ingest URL's query parameter.
PLANTED_PASSWORD = "mirror-pw-5a7c1e9b"
PLANTED_KEY = "api-key-3d9f0b2a"
PLANTED_QUERY = "query-token-8e4b6c1d"
KEYS = {**{k: PLANTED_KEY for k in ENV}, mercor_eval.KEY_ENV: PLANTED_KEY, llm_stats.KEY_ENV: PLANTED_KEY}


def _layout(source: str, live: dict[str, bytes], shared: Path) -> dict[str, bytes] | None:
    """The source's own layout change (the drift guards' table for the boards; headers renamed for the two exports)."""
    if source == "epoch-benchmarks":
        import io
        import zipfile

        out = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(live[EPOCH_URL])) as src, zipfile.ZipFile(out, "w") as dst:
            for info in src.infolist():
                dst.writestr(info, src.read(info).replace(b"Model version", b"Model", 1))
        return {EPOCH_URL: out.getvalue()}
    if source == "artificial-analysis":
        return {AA_PAGE_URL: live[AA_PAGE_URL].replace(b"intelligenceIndex,", b"index,", 1)}
    if source == "swallow-leaderboard":
        url = next(u for u in live if u.endswith("swallow_leaderboard_post_en.js"))
        return {url: live[url].replace(b"const g_models", b"const models_v2", 1)}
    if source == "lexam":
        url = next(u for u, b in live.items() if b.startswith(b"<") and b"LEXam" in b[:20000])
        return {url: live[url].replace(b"<table", b"<div", 2).replace(b"</table>", b"</div>", 2)}
    change = LAYOUT.get(source)
    if change is None:
        return None
    from test_drift_guards import PRIMARY

    url = PRIMARY[source]
    vals = json.loads((shared / "formats/vals_ai/finance_agent_payload.json").read_text())
    return {url: change(live[url], vals) if change.__code__.co_argcount == 2 else change(live[url])}


@dataclass
class Night:
    db: Path
    store: RawStore
    srv: ScriptedServer
    other: ScriptedServer
    live: dict[str, bytes]
    urls: dict[str, list[str]]  # source -> the live URLs its good night fetched
    mirror: str
    primary: dict[str, str] = field(default_factory=dict)  # source -> the page holding most of its rows
    outputs: list[str] = field(default_factory=list)  # everything printed, grepped for secrets at the end
    state: dict[str, Any] | None = None  # the scores and evaluations after the last case (None: unknown)
    held: Warehouse | None = None  # the writer the cases share (a refresh closes and reopens it per source)

    def writer(self) -> Warehouse:
        """The warehouse the next case refreshes: opened once and kept between cases, as a nightly
        process keeps it for all its sources (each refresh still releases it around every fetch)."""
        if self.held is None:
            self.held = Warehouse.open(self.db)
        return self.held

    def release(self) -> None:
        """Close the shared writer, before anything else (the CLI, a reader) opens the file."""
        if self.held is not None:
            held, self.held = self.held, None
            held.close()


DRIP_SLACK_S = 8.0
#: The per-source deadline of runs that do not test it: a crawl of a dozen pages must not fail a
#: good night (or a fault it should recover from) because a loaded CI machine is slow.
ROOMY_DEADLINE = 60.0


def _run(night: Night, keys: list[str], deadline: float = ROOMY_DEADLINE) -> tuple[list[Any], dict[str, float]]:
    started: dict[str, float] = {}
    elapsed: dict[str, float] = {}
    crawl = {**CRAWL_SETTINGS, "CLOSESPIDER_TIMEOUT": deadline, "DOWNLOAD_TIMEOUT": 4 * deadline}
    options = R.RefreshOptions(
        mirror=night.mirror,
        client_factory=lambda m: HttpClient(mirror=m, **{**HTTP_POLICY, "source_deadline": deadline}),
        env=KEYS,
        crawl_settings=crawl,
        on_start=lambda key: started.__setitem__(key, time.monotonic()),
        on_done=lambda r: elapsed.__setitem__(r.source_key, time.monotonic() - started[r.source_key]),
    )
    night.state = None  # a refresh may change it
    wh = night.writer()
    try:
        results = R.refresh(wh, night.store, keys, options)
    except BaseException:
        night.release()
        raise
    # what the next case starts from: read on a cursor of its own, which sees only what was committed
    night.state = _state_of(wh.cursor())
    night.outputs.append(json.dumps([r.as_dict() for r in results], default=str))
    return results, elapsed


def _state(night: Night) -> dict[str, Any]:
    night.release()
    with Warehouse.open(night.db, read_only=True) as wh:
        return _state_of(wh.con)


def _state_of(con: Any) -> dict[str, Any]:
    """Per source: its scores (count, and a hash of ids, values and units) and its evaluations.

    Read from the tables the ``score`` view joins (every stored score, an orphan too), not through
    the view, whose joins and derived columns cost ten times as much, after each of 483 cases."""
    scores = con.execute(
        "SELECT v.source_key, count(*), sum(hash(v.score_id, v.value, g.unit))"
        " FROM score_value v JOIN score_group g USING (group_id) GROUP BY 1 ORDER BY 1"
    ).fetchall()
    evaluations = con.execute("SELECT source_key, count(*) FROM evaluation GROUP BY 1 ORDER BY 1").fetchall()
    return {"scores": scores, "evaluations": evaluations}


def _rows(state: dict[str, Any]) -> int:
    return sum(n for _, n, _ in state["scores"]) + sum(n for _, n in state["evaluations"])


def _url(key: MirrorKey) -> str:
    """The live URL of a mirror key (a POST's key is ``(URL, body)``)."""
    return key if isinstance(key, str) else key[0]


def _key_path(key: MirrorKey) -> str:
    """The mirror path the scripted server serves ``key``'s payload at (a POST's body is part of it)."""
    url, body = (key, None) if isinstance(key, str) else key
    return "/m/" + "/".join(quote(p, safe="-._~+,=@") for p in mirror_relpath(url, body=body).parts)


@pytest.fixture(scope="module")
def night(shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Night]:
    root = tmp_path_factory.mktemp("faults")
    live = {**payloads(shared), EPOCH_URL: epoch_zip(shared / EPOCH_DIR), AA_PAGE_URL: (shared / AA_CSV).read_bytes()}
    build_mirror(root / "m", live)
    with serve(static_dir=root) as srv, serve(static_dir=root) as other:
        mirror = f"http://evalhouse:{PLANTED_PASSWORD}@{srv.host}:{srv.port}/m"
        n = Night(root / "w.duckdb", RawStore(root / "w.raw"), srv, other, live, {}, mirror)
        results, _ = _run(n, SOURCES)
        bad = {r.source_key: r.error for r in results if r.status not in ("completed", "partial")}
        assert not bad, bad
        n.release()
        with Warehouse.open(n.db, read_only=True) as wh:
            as_stored = {unquote(str(httpx.URL(_url(u)))): u for u in live}  # stored URLs are percent-encoded
            for key, url in wh.con.execute("SELECT DISTINCT source_key, url FROM raw_snapshot ORDER BY 2").fetchall():
                n.urls.setdefault(key, []).append(as_stored[unquote(url)])
            for key, details in wh.con.execute("SELECT source_key, details FROM ingest_run").fetchall():
                by_url = json.loads(details)["figures"]["by_url"]
                n.primary[key] = as_stored[unquote(max(sorted(by_url), key=lambda u: by_url[u]))]
        try:
            yield n
        finally:
            n.release()


def _serve(night: Night, bodies: dict[str, list[Reply]]) -> None:
    for url, replies in bodies.items():
        night.srv.route(_key_path(url), *replies)


def _restore(night: Night, urls: list[str]) -> None:
    for url in urls:
        night.srv.route(_key_path(url), Reply(200, night.live[url]))


#: Where a source's board ends inside its payload: a body cut after this marker still holds the
#: whole board (Vectara's README table ends at 29% of the file), so reading it is no fault.
BOARD_ENDS = {"vectara-hallucination-leaderboard": b"<!-- LEADERBOARD_END -->"}


def _holds_the_whole_board(source: str, bodies: dict[str, list[Reply]]) -> bool:
    end = BOARD_ENDS.get(source)
    return end is not None and all(end in r.body for replies in bodies.values() for r in replies)


def _case(night: Night, source: str, fault: Fault | None, bodies: dict[str, list[Reply]]) -> tuple[bool, str, int]:
    neighbour = "aider-polyglot" if source != "aider-polyglot" else "lmarena"
    before = night.state if night.state is not None else _state(night)
    _serve(night, bodies)
    # only the faults that are about time run against the short deadline
    timed = fault is not None and any(w in fault.name for w in ("drip", "hang"))
    try:
        results, elapsed = _run(night, [source, neighbour], DEADLINE if timed else ROOMY_DEADLINE)
    finally:
        _restore(night, list(bodies))
    after = night.state if night.state is not None else _state(night)  # and the next case's before
    mine, other = results
    exit_code = 1 if any(r.status == "failed" for r in results) else 0
    lost = max(0, _rows(before) - _rows(after))
    problems = []
    if fault is not None and fault.name.startswith("half the body") and _holds_the_whole_board(source, bodies):
        if mine.status != "unchanged" or exit_code != 0:  # the same board: nothing to load, nothing to fail
            problems.append(f"the cut body holds the whole board: expected unchanged, got {mine.status}")
    elif fault is not None and fault.recover:
        if mine.status == "failed" or exit_code != 0:
            problems.append(f"did not recover: {mine.status} {mine.error}")
    else:
        words = fault.words if fault is not None else ()
        if mine.status != "failed" or exit_code != 1:
            problems.append(f"expected failed, got {mine.status} (exit {exit_code})")
        elif not mine.error or (words and not any(w in mine.error for w in words)):
            problems.append(f"reason {mine.error!r} names none of {words}")
    if other.status != "unchanged":
        problems.append(f"neighbour {neighbour} {other.status}: {other.error}")
    if before != after:
        problems.append(f"data changed ({lost} rows lost)")
    # the elapsed time is the whole source run (a crawl's process start and shutdown, parse, load) on a
    # loaded CI machine, not just the fetch the deadline bounds; without the deadline a drip of the
    # page runs for hours, so a few seconds of slack still prove the deadline cut it
    if fault is not None and "drip" in fault.name and elapsed[source] > DEADLINE + DRIP_SLACK_S:
        problems.append(f"slow drip ran {elapsed[source]:.1f}s, deadline {DEADLINE}s")
    return not problems, "; ".join(problems), lost


PINNED = ("epoch-benchmarks", "artificial-analysis")


@pytest.mark.parametrize(
    "source", [s if s in PINNED else pytest.param(s, marks=pytest.mark.slow) for s in SOURCES]
)  # the two pinned exports by default; the twelve boards are the slow part
def test_every_fault_against_one_source(night: Night, shared: Path, source: str, figures) -> None:
    urls = night.urls[source]
    primary = night.primary[source]
    failed = []
    for fault in FAULTS:
        # network faults hit the first page fetched; a unit switch rescales every page the source reads
        targets = urls if "unit switch" in fault.name else [primary]
        bodies = {u: fault.make(night.live[u], Context(_key_path(u), night.other.url)) for u in targets}
        ok, why, lost = _case(night, source, fault, bodies)
        figures.fault(f"http {source}", fault.name, ok, why)
        figures.rows_lost += lost
        if not ok:
            failed.append(f"{fault.name}: {why}")
    layout = _layout(source, night.live, shared)
    if layout is not None:
        ok, why, lost = _case(night, source, None, {u: [Reply(200, b)] for u, b in layout.items()})
        figures.fault(f"http {source}", "layout change", ok, why)
        figures.rows_lost += lost
        if not ok:
            failed.append(f"layout change: {why}")
    night.release()
    result = runner.invoke(app, ["--db", str(night.db), "audit", "verify"])
    night.outputs.append(result.output)
    assert result.exit_code == 0, f"audit verify after the faults of {source}: {result.output[-2000:]}"
    assert not failed, "\n".join(failed)


def test_the_warehouse_validates_after_every_fault(night: Night) -> None:
    """The great-expectations checkpoint over the warehouse every fault above was served to (run once,
    after them: each case already compared every row before and after; a check that fails here names
    the suite and the rows)."""
    night.release()
    result = runner.invoke(app, ["--db", str(night.db), "validate"])
    night.outputs.append(result.output)
    assert result.exit_code == 0, result.output[-2000:]


def test_slow_drip_through_the_cli_ends_within_the_deadline(night: Night) -> None:
    night.release()
    url = EPOCH_URL
    night.srv.route(_key_path(url), Reply(200, night.live[url], drip=1.0, drip_bytes=1))
    start = time.monotonic()
    try:
        result = runner.invoke(
            app,
            [
                "--db",
                str(night.db),
                "refresh",
                "--source",
                "epoch-benchmarks",
                "--source",
                "aider-polyglot",
                "--mirror",
                night.mirror,
                "--deadline",
                "3",
                "--skip-validation",
                "--json",
            ],
        )
    finally:
        _restore(night, [url])
    took = time.monotonic() - start
    night.outputs.append(result.output)
    assert result.exit_code == 1, result.output
    runs = {r["source"]: r for r in json.loads(result.stdout)["runs"]}
    assert runs["epoch-benchmarks"]["status"] == "failed"
    assert "deadline exceeded" in runs["epoch-benchmarks"]["error"]
    assert runs["aider-polyglot"]["status"] == "unchanged"
    assert took < 3 + 10, f"the refresh took {took:.1f}s with --deadline 3"


def test_no_planted_secret_is_stored_or_printed(night: Night, tmp_path: Path) -> None:
    """Plant secrets in an ingest URL (one that loads, one that fails), then grep everything."""
    night.release()
    aider = next(u for u in night.live if u.endswith("polyglot_leaderboard.yml"))
    loads = f"{night.srv.url}{_path(aider)}?api_key={PLANTED_QUERY}&page=1"
    night.srv.route("/broken.yml", Reply(500, b"down"))
    fails = f"http://user:{PLANTED_PASSWORD}@{night.srv.host}:{night.srv.port}/broken.yml?token={PLANTED_QUERY}"
    for url, code in ((loads, 0), (fails, 1)):
        result = runner.invoke(
            app, ["--db", str(night.db), "ingest", "aider-polyglot", url, "--skip-validation", "--json"]
        )
        night.outputs.append(result.output)
        assert result.exit_code == code, result.output
    snapshot = tmp_path / "snap"
    result = runner.invoke(app, ["--db", str(night.db), "snapshot", "create", str(snapshot), "--json"])
    night.outputs.append(result.output)
    assert result.exit_code == 0, result.output
    secrets = (PLANTED_PASSWORD, PLANTED_KEY, PLANTED_QUERY)
    found = []
    with Warehouse.open(night.db, read_only=True) as wh:
        tables = [r[0] for r in wh.con.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
        for table in tables:
            text = wh.con.execute(f'SELECT CAST(list(COLUMNS(*)) AS VARCHAR) FROM "{table}"').fetchall()
            blob = json.dumps(text, default=str)
            found += [f"table {table}: {s}" for s in secrets if s in blob]
    for folder in (night.store.root, snapshot):
        for path in folder.rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                found += [f"file {path}: {s}" for s in secrets if s.encode() in data]
    output = "\n".join(night.outputs)
    found += [f"output: {s}" for s in secrets if s in output]
    assert not found, found
    with Warehouse.open(night.db, read_only=True) as wh:  # the planted URLs were stored, redacted
        labels = [r[0] for r in wh.con.execute("SELECT url FROM raw_snapshot WHERE url LIKE '%api_key=%'").fetchall()]
        errors = [r[0] for r in wh.con.execute("SELECT error FROM ingest_run WHERE error LIKE '%token=%'").fetchall()]
    assert labels and all("api_key=[REDACTED]" in u for u in labels)
    assert errors and all("token=[REDACTED]" in e for e in errors)
