"""Property tests: every parser and the CSV entry points of the analyses, 1,000 seeded inputs each
(200 under the CI profile: tests/sizes.py).

Inputs are real payloads from ../shared (and the authored fixtures where no real one exists),
mutated - cut, bytes flipped, a chunk spliced in or repeated, numbers swapped for text, JSON
nested deeply - or plain random bytes. The contract: a parser yields records, refused rows with a
reason or item batches, or raises ``ParseError`` for a payload unreadable as a whole; nothing
else ever escapes. EEE records read by the import become records or quarantine rows with a
reason, and every record that comes through is judged by the same validation the loader uses.
``analyze efa`` and ``analyze equate`` exit 0, or 1 or 2 with the problem named (nothing to fit,
bad input), never with a traceback.
"""

from __future__ import annotations

import io
import json
import math
import re
import sys
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

import pytest
from clirunner import CliRunner
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ingest"))

from fixture_mirror import payloads
from sizes import examples

from evalhouse.cli import app
from evalhouse.curation.plausibility import judge_units, record_problem, result_problem
from evalhouse.ingest.catalog import catalog
from evalhouse.ingest.pinned import AA_CSV, AA_PAGE_URL, EPOCH_DIR, EPOCH_URL, epoch_zip
from evalhouse.ingest.source import FetchMeta, ParseError
from evalhouse.ingest.sources import terminal_bench
from evalhouse.pipeline import items_ingest
from evalhouse.schema.items import ItemBatch
from evalhouse.schema.records import ParsedRecord, ParseFailure

EXAMPLES = examples(1_000)
SEED = 18
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
NOW = datetime(2026, 1, 1, tzinfo=UTC)
runner = CliRunner()


def _owner(url: str, modules: dict) -> str | None:
    """The source one of whose URL constants (its endpoints and bases) is the longest prefix of ``url``."""
    best, length = None, 0
    for key, module in modules.items():
        bases = [v for v in vars(module).values() if isinstance(v, str) and v.startswith("http")]
        for base in [*bases, *module.SOURCE.default_urls]:
            if url.startswith(base) and len(base) > length:
                best, length = key, len(base)
    return best


@cache
def samples(shared_root: str) -> dict[str, list[tuple[bytes, FetchMeta]]]:
    """Real (or authored) payloads per catalogued source, each with the fetch meta it came with."""
    shared = Path(shared_root)
    modules = catalog()
    out: dict[str, list[tuple[bytes, FetchMeta]]] = {k: [] for k in modules}

    def add(key: str, body: bytes, url: str, label: str | None = None, content_type: str | None = None) -> None:
        body = body if key == "inspect-log" else _small(body)  # an Inspect log cut short is only broken JSON
        out[key].append((body, FetchMeta(key, url, "0" * 64, NOW, content_type, label)))

    live = {**payloads(shared), EPOCH_URL: epoch_zip(shared / EPOCH_DIR), AA_PAGE_URL: (shared / AA_CSV).read_bytes()}
    for url, body in live.items():
        if isinstance(url, tuple):  # a POST's answer, (URL, body): added below with the label it is asked with
            continue
        key = _owner(url, modules)
        if key is not None and len(out[key]) < 6:
            add(key, body, url, url.rsplit("/", 1)[-1].split("?")[0])
    for name in ("gpqa_diamond.csv", "swe_bench_verified.csv", "aider_polyglot_external.csv"):
        add("epoch-benchmarks", (shared / EPOCH_DIR / name).read_bytes(), f"file:///{name}", name, "text/csv")
    for path in sorted((shared / "formats/hf-model-cards").glob("*.README.md"))[:3]:
        add("model-cards", path.read_bytes(), path.as_uri(), "README.md", "text/markdown")
    for path in sorted((FIXTURES / "papers").glob("*.html"))[:2]:
        add("papers", path.read_bytes(), path.as_uri(), path.name, "text/html")
    items = {
        "lm-eval": [shared / "formats/lm_eval"],
        "helm-run": sorted(p for p in (shared / "formats/helm").iterdir() if p.is_dir())[:2],
        "inspect-log": sorted((shared / "formats/inspect").glob("*.json"))[:3],
        "eee-instances": [next((shared / "formats/eee/demo-source").rglob("*_samples.jsonl")).parent],
        "panel-csv": [],
    }
    for key, paths in items.items():
        for path in paths:
            body, content_type, _ = items_ingest.read_payload(modules[key], path)
            add(key, body, path.as_uri(), path.name, content_type)
    add("panel-csv", _panel_csv(), "file:///panel.csv", "panel.csv", "text/csv")
    add("terminal-bench", _terminal_bench_answer(), terminal_bench.ENDPOINT, "board:2.0", "application/json")
    recorded = FIXTURES / "terminal-bench" / "leaderboard-read_4-0-0.json"
    add("terminal-bench", recorded.read_bytes(), terminal_bench.ENDPOINT, "board:4.0", "application/json")
    return out


def _terminal_bench_answer() -> bytes:
    """An answer AUTHORED to the shape tbench.ai's client declares (no real one is recorded)."""
    package, name = terminal_bench.BOARDS["2.0"]
    row = {
        "id": "r1",
        "rank": 1,
        "status": "display",
        "n_trials": 445,
        "metadata": {
            "agent_display": {"label": "Terminus 2", "url": "https://example.org"},
            "model_display": {"label": "GPT-5", "url": "https://example.org"},
            "agent_org": {"label": "Stanford"},
            "model_org": "OpenAI",
            "date": "2025-11-04",
            "reasoning_effort": "high",
        },
        "metrics": {"accuracy": 49.6, "accuracy_ci95_half_width": 2.9, "accuracy_stderr": 1.5, "n_trials": 445},
    }
    hidden = {**row, "id": "r2", "status": "hide"}
    pages = {"page": 1, "total_pages": 1}
    doc = {"leaderboard": {"package": package, "name": name}, "rows": [row, hidden], "pagination": pages}
    return json.dumps(doc).encode()


#: Samples are cut to this many bytes (CSV: the header and the first lines; a zip: three members,
#: each cut): a thousand parses of a 600 KB page would take minutes and mutate the same bytes.
SMALL = 48 * 1024


def _small(body: bytes) -> bytes:
    if len(body) <= SMALL:
        return body
    if body[:2] == b"PK":
        import zipfile

        out = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(body)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
            for info in src.infolist()[:3]:
                dst.writestr(info, _small(src.read(info)[: SMALL // 3]))
        return out.getvalue()
    lines = body[:SMALL].split(b"\n")
    return b"\n".join(lines[:-1] if len(lines) > 1 else lines) + b"\n"


def _panel_csv() -> bytes:
    lines = ["item_id,benchmark,suite,checkpoint,axis,effort,seed,p_correct"]
    for i in range(6):
        for c, (axis, effort) in enumerate([("pt", 1.0), ("sft", 2.0), ("rl", 3.0)]):
            lines.append(f"q{i},demo,s,ck{c},{axis},{effort},0,{0.1 * (i + c) % 1:.2f}")
    return ("\n".join(lines) + "\n").encode()


# -- mutations --------------------------------------------------------------------------------


#: Values a valid-looking payload can hold that no measurement can mean: a number quoted, a boolean,
#: 10^400, a negative count or error, a date before 2015 / in 2100 / that does not exist, a unit
#: swapped, a timestamp that is no time. Each kind rewrites the first few matches it finds.
_NUMBER = re.compile(rb"(?<![\w.\"-])\d{1,3}\.\d+(?![\w.])")
_DATE = re.compile(rb"(?<!\d)(?:19|20)\d\d-\d\d-\d\d(?!\d)")
_EPOCH = re.compile(rb'"1[5-9]\d{8}(?:\.\d+)?"')
HOSTILE: dict[str, Callable[[re.Match[bytes], int], bytes]] = {
    "quoted numbers": lambda m, i: b'"' + m.group() + b'"',
    "booleans": lambda m, i: (b"true", b"false")[i % 2],
    "10^400": lambda m, i: b"1" + b"0" * 400,
    "negatives": lambda m, i: b"-" + m.group(),
    "dates": lambda m, i: (b"1900-01-01", b"2100-01-01", b"2024-02-30")[i % 3],
    "timestamps": lambda m, i: (b'"yesterday"', b'"2100-01-01T00:00:00Z"')[i % 2],
}
_PATTERN = {"dates": _DATE, "timestamps": _EPOCH}
_UNIT = re.compile(rb'"(?:proportion|percent)"')
_SWAP = {b'"proportion"': b'"percent"', b'"percent"': b'"proportion"'}
#: How often each mutation kind was drawn (the suite's figures list them).
DRAWN: Counter[str] = Counter()


def _hostile(body: bytes, kind: str, count: int) -> bytes:
    if kind == "units":
        return _UNIT.sub(lambda m: _SWAP[m.group()], body, count)
    seen = iter(range(count))
    sub = HOSTILE[kind]
    return _PATTERN.get(kind, _NUMBER).sub(lambda m: sub(m, i) if (i := next(seen, -1)) >= 0 else m.group(), body)


@st.composite
def mutated(draw: st.DrawFn, body: bytes) -> bytes:
    """A real payload, damaged the way nights damage them (or replaced by noise), or holding
    values no measurement can mean (:data:`HOSTILE`)."""
    kinds = ["cut", "flip", "splice", "repeat", "numbers", "deep", "noise", "same", *HOSTILE, "units"]
    kind = draw(st.sampled_from(kinds))
    DRAWN[kind] += 1
    if kind in HOSTILE or kind == "units":
        return _hostile(body, kind, draw(st.integers(1, 6)))
    n = len(body)
    if kind == "cut":
        return body[: draw(st.integers(0, n))]
    if kind == "flip":
        data = bytearray(body)
        for _ in range(draw(st.integers(1, 8))):
            if data:
                i = draw(st.integers(0, len(data) - 1))
                data[i] = draw(st.integers(0, 255))
        return bytes(data)
    if kind == "splice":
        at = draw(st.integers(0, n))
        return body[:at] + draw(st.binary(max_size=64)) + body[at:]
    if kind == "repeat":
        a = draw(st.integers(0, n))
        b = min(n, a + draw(st.integers(0, 400)))
        return body[:b] + body[a:b] * draw(st.integers(1, 3)) + body[b:]
    if kind == "numbers":
        token = draw(st.sampled_from([b"NaN", b"-1e309", b"1e400", b'"x"', b"null", b"", b"99999999999999999999"]))
        return body.replace(b"0.", token + b"0.", draw(st.integers(1, 20)))
    if kind == "deep":
        depth = draw(st.sampled_from([70, 1_000, 100_000]))
        at = draw(st.integers(0, n))
        return body[:at] + b"[" * depth + b"]" * depth + body[at:]
    if kind == "noise":
        return draw(st.binary(max_size=4096))
    return body


def _check_items(key: str, body: bytes, meta: FetchMeta, figures) -> None:
    module = catalog()[key]
    figures.fuzzed[f"parser {key}"] += 1
    try:
        items = list(module.parse(body, meta=meta))
    except ParseError as exc:
        assert str(exc), "a ParseError names its reason"
        return
    except Exception:
        figures.unhandled[key] += 1
        raise
    for item in items:
        assert isinstance(item, ParsedRecord | ParseFailure | ItemBatch), type(item)
        if isinstance(item, ParseFailure):
            assert item.reason and item.locator
    try:
        _judged(judge_units(items))
    except Exception:
        figures.unhandled[f"{key} (plausibility)"] += 1
        raise


def _judged(items: list) -> None:
    """What the loader asks of every record (the plausibility checks) never raises, and a result
    they pass has a score a float holds."""
    for item in items:
        if not isinstance(item, ParsedRecord) or not isinstance(item.record, dict):
            continue
        record_problem(item.record)
        for index, result in enumerate(item.record.get("evaluation_results") or []):
            if isinstance(result, dict) and not item.refused_results.get(index) and result_problem(result) is None:
                assert math.isfinite(float(result["score_details"]["score"]))


PARSERS = sorted(catalog())


@pytest.mark.slow
@pytest.mark.parametrize("key", PARSERS)
def test_parser_never_raises_anything_but_parse_error(shared: Path, key: str, figures) -> None:
    pool = samples(str(shared))[key]
    assert pool, f"no sample payload for {key}"

    @seed(SEED)
    @FUZZ
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        body, meta = data.draw(st.sampled_from(pool))
        _check_items(key, data.draw(mutated(body)), meta, figures)

    run()
    _count_kinds(figures)


def _count_kinds(figures) -> None:
    """The hostile-value kinds drawn so far, as figures (the other kinds are counted per parser)."""
    for kind in [*HOSTILE, "units"]:
        figures.fuzzed[f"hostile values: {kind}"] += DRAWN.pop(kind, 0)
    DRAWN.clear()


# -- EEE records and samples through the import's reader ------------------------------------


@pytest.mark.slow
def test_eee_records_and_samples_are_loaded_or_quarantined(shared: Path, tmp_path: Path, figures) -> None:
    from evalhouse.pipeline.import_eee import _TreeReader
    from evalhouse.pipeline.tree_files import list_tree
    from evalhouse.warehouse.load.records import validate_record
    from evalhouse.warehouse.raw.store import RawStore

    demo = next((shared / "formats/eee/demo-source").rglob("*_samples.jsonl"))
    record = demo.with_name(demo.name.replace("_samples.jsonl", ".json")).read_bytes()
    lines = demo.read_bytes()
    legacy = sorted((shared / "datasets/eee-datastore-legacy").rglob("*.json"))[:20]
    pool = [record, *(p.read_bytes() for p in legacy)]
    folder = tmp_path / "data" / "c" / "org" / "m"
    folder.mkdir(parents=True)
    store = RawStore(tmp_path / "raw")

    @seed(SEED)
    @FUZZ
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        figures.fuzzed["EEE record + samples (import)"] += 1
        path = folder / "f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40.json"
        path.write_bytes(data.draw(mutated(data.draw(st.sampled_from(pool)))))
        samples = path.with_name(path.stem + "_samples.jsonl")
        if data.draw(st.booleans()):
            samples.write_bytes(data.draw(mutated(lines)))
        else:
            samples.unlink(missing_ok=True)
        listing = list_tree(tmp_path / "data")
        reader = _TreeReader(listing, store, "eee-c", frozenset(), {})
        try:
            items = list(reader.items(listing.json_files))
        except Exception:
            figures.unhandled["EEE import reader"] += 1
            raise
        for item in items:
            assert isinstance(item, ParsedRecord | ParseFailure)
            if isinstance(item, ParseFailure):
                assert item.reason
            else:
                valid, why = validate_record(item.record)
                assert (valid is None) == bool(why)  # loaded, or quarantined with the reason
                if valid is not None:
                    _judged([item])  # and judged as the loader judges it, without raising

    run()
    _count_kinds(figures)


# -- the CSV entry points of the analyses ------------------------------------------------------

CELLS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=32).map(repr),
    st.integers(-5, 105).map(str),
    st.sampled_from(["", "NA", "nan", "x", "1e400", "-", " 0.5 ", "0,5", '"', "\u00e9"]),
)


@st.composite
def matrix_csv(draw: st.DrawFn) -> str:
    rows = draw(st.integers(0, 14))
    cols = draw(st.integers(0, 7))
    header = ["model"] + [draw(st.sampled_from([f"b{j}", "b0", "", "score"])) for j in range(cols)]
    out = io.StringIO()
    out.write(",".join(header) + "\n")
    for i in range(rows):
        ragged = draw(st.integers(-1, 1)) if draw(st.integers(0, 9)) == 0 else 0
        cells = [draw(CELLS) if draw(st.integers(0, 5)) == 0 else f"{draw(st.floats(0, 1)):.3f}" for _ in range(cols)]
        out.write(",".join([f"m{i}", *cells[: max(0, cols + ragged)]]) + "\n")
    return out.getvalue()


@st.composite
def long_csv(draw: st.DrawFn) -> str:
    header = draw(st.sampled_from(["model,benchmark,score", "model,benchmark,value", "model,score", ""]))
    out = io.StringIO()
    out.write(header + "\n")
    for _ in range(draw(st.integers(0, 40))):
        model = draw(st.sampled_from(["a", "b", "c", "d", "e", ""]))
        bench = draw(st.sampled_from(["x", "y", "z", "w", ""]))
        score = draw(CELLS) if draw(st.integers(0, 4)) == 0 else f"{draw(st.floats(0, 100)):.2f}"
        out.write(f"{model},{bench},{score}\n")
    return out.getvalue()


def _cli_contract(args: list[str], name: str, figures) -> None:
    figures.fuzzed[f"cli {name}"] += 1
    result = runner.invoke(app, args)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        figures.unhandled[f"cli {name}"] += 1
        raise AssertionError(f"{name}: {type(result.exception).__name__}: {result.exception}") from result.exception
    # 0 fitted; 2 bad input; 1 the fit ran and found nothing to report (no observed scores)
    assert result.exit_code in (0, 1, 2), (result.exit_code, result.output[-800:])
    if result.exit_code:
        assert result.output.strip() and "Traceback" not in result.output, "a refusal names the problem"


@pytest.mark.slow
def test_analyze_efa_accepts_or_names_the_problem(tmp_path: Path, figures) -> None:
    path = tmp_path / "matrix.csv"

    @seed(SEED)
    @FUZZ
    @given(text=matrix_csv(), factors=st.sampled_from([None, 1, 2, 5]), method=st.sampled_from(["minres", "ml"]))
    def run(text: str, factors: int | None, method: str) -> None:
        path.write_text(text, encoding="utf-8")
        extra = ["--factors", str(factors)] if factors else []
        _cli_contract(
            ["analyze", "efa", "--input", str(path), "--method", method, *extra, "--json"], "analyze efa", figures
        )

    run()


@pytest.mark.slow
def test_analyze_equate_accepts_or_names_the_problem(tmp_path: Path, figures) -> None:
    path = tmp_path / "long.csv"

    @seed(SEED)
    @FUZZ
    @given(text=long_csv())
    def run(text: str) -> None:
        path.write_text(text, encoding="utf-8")
        _cli_contract(["analyze", "equate", "--input", str(path), "--json"], "analyze equate", figures)

    run()


def test_a_terminal_bench_answer_not_for_the_board_asked_is_a_layout_change() -> None:
    """An answer whose request names no board (a manual ingest, a mirror without the label), or
    that describes another board than the one asked for, is a ParseError, never a crash or rows
    filed under the wrong version."""
    from evalhouse.ingest.sources import terminal_bench

    body = b'{"leaderboard": {"package": "terminal-bench/terminal-bench-2", "name": "2-0"}, "rows": [{"rank": 1}]}'
    url = terminal_bench.ENDPOINT
    for label in ("leaderboard-read", None, "board:", "board:9.9", "board:4.0"):
        meta = FetchMeta("terminal-bench", url, "0" * 64, NOW, label=label)
        with pytest.raises(ParseError, match="layout changed"):
            list(terminal_bench.parse(body, meta=meta))
    meta = FetchMeta("terminal-bench", url, "0" * 64, NOW, label="board:2.0")
    assert list(terminal_bench.parse(body, meta=meta))  # the board asked for: its (malformed) row is refused


def test_odd_counts_and_intervals_are_not_crashes() -> None:
    """Found by the fuzzer in a full run: an aider run whose test_cases is not a count, and a Mercor
    cell whose ci95 lacks a bound, load without the count or the interval instead of raising."""
    from evalhouse.ingest.sources import aider_polyglot, mercor_eval

    yml = b"- dirname: d1\n  model: m1\n  test_cases: '2[[]]25'\n  pass_rate_2: 40.0\n"
    meta = FetchMeta("aider-polyglot", "https://example.org/polyglot_leaderboard.yml", "0" * 64, NOW)
    (record,) = [i for i in aider_polyglot.parse(yml, meta=meta) if isinstance(i, ParsedRecord)]
    assert all("uncertainty" not in r or not r["uncertainty"] for r in record.record["evaluation_results"])
    assert mercor_eval._interval({"lower": 0.1}) is None and mercor_eval._interval({"lower": 0.1, "upper": "x"}) is None
    assert mercor_eval._interval({"lower": 0.1, "upper": 0.3}) == (0.1, 0.3)
