"""A plain training-panel CSV: ``item_id,benchmark,suite,checkpoint,axis,effort,seed,p_correct``.

For panels produced elsewhere (a GPU cluster's inference over checkpoints and seeds). One line is
one response. ``axis`` is one of PT / SFT / RL / anchor, ``effort`` a number in the axis's unit
(PT tokens, SFT pairs, RL prompts), ``seed`` an integer (empty = unknown), ``p_correct`` a
probability in [0, 1]. A line that breaks any of these is refused with its line number; the rest
load. The whole file is read with Arrow's CSV reader and turned into dictionary-encoded columns
with numpy (no Python loop over lines), so 10⁷ lines parse in seconds.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import csv as pacsv

from evalhouse.ingest.source import FetchMeta, ParseError, SourceSpec
from evalhouse.ingest.sources import _items as X
from evalhouse.schema import items as S
from evalhouse.schema.records import ParseFailure, ParseItem

COLUMNS = ("item_id", "benchmark", "suite", "checkpoint", "axis", "effort", "seed", "p_correct")
SOURCE = SourceSpec(
    key="panel-csv",
    name="Item x checkpoint x seed panel (CSV)",
    kind="harness_log",
    tier=3,
    organisation="the panel's producer",
    licence="as the panel's producer states",
    homepage="https://github.com/evaleval/every_eval_ever",
    default_urls=(),
    cadence="manual",
    parser_version="panel-csv/1",
    collection="panel-csv",
    description="p_correct per item, checkpoint and seed: " + ",".join(COLUMNS),
)

EFFORT_UNIT = {"PT": "tokens", "SFT": "sft_pairs", "RL": "rl_prompts", "anchor": None}
_DICT = pa.dictionary(pa.int32(), pa.string())
_TYPES = {
    "item_id": _DICT,
    "benchmark": _DICT,
    "suite": _DICT,
    "checkpoint": _DICT,
    "axis": _DICT,
    "effort": pa.float64(),
    "seed": pa.int64(),
    "p_correct": pa.float64(),
}


#: A harness log is read from files ('evalhouse ingest KEY PATH'): nothing to fetch.
plan = X.files_only


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    name = meta.label or "panel.csv"
    header = body.split(b"\n", 1)[0].decode("utf-8-sig", "replace").strip().replace("\r", "")
    try:
        columns = tuple(h.strip() for h in next(csv.reader([header]), []))
    except csv.Error as exc:
        raise ParseError(f"{name}: the header is not readable CSV: {exc}") from exc
    if columns != COLUMNS:
        raise ParseError(f"{name}: header must be {','.join(COLUMNS)} (got {header[:200]!r})")
    data, failures = _fast(body)
    if data is None:
        data, failures = _exact(body, name)
    yield from failures
    if data.num_rows:
        yield _batch(data, name, meta.sha256, len(failures))


def _fast(body: bytes) -> tuple[pa.Table | None, list[ParseFailure]]:
    """Arrow's typed reader; None when a line needs the exact path (bad value, blank or ragged line,
    bytes that are not UTF-8: Arrow could not even hand such a row to ``skip``)."""
    if not body.isascii():
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:
            return None, []
    ragged: list[int] = []

    def skip(row: Any) -> str:
        ragged.append(row.number)
        return "skip"

    try:
        data = pacsv.read_csv(
            io.BytesIO(body),
            parse_options=pacsv.ParseOptions(invalid_row_handler=skip, newlines_in_values=False),
            convert_options=pacsv.ConvertOptions(column_types=_TYPES, strings_can_be_null=True),
        )
    except pa.ArrowInvalid:
        return None, []
    lines = body.count(b"\n") + (0 if body.endswith(b"\n") else 1) - 1
    if ragged or data.num_rows != lines:
        return None, []
    line = pa.array(np.arange(2, data.num_rows + 2, dtype=np.int64))
    return _validated(data.append_column("line", line), "")


def _exact(body: bytes, name: str) -> tuple[pa.Table, list[ParseFailure]]:
    """Line by line with the csv module: every line keeps its own number."""
    text = body.decode("utf-8-sig", "replace")
    cols: dict[str, list[Any]] = {c: [] for c in (*COLUMNS, "line")}
    failures = []
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise ParseError(f"{name} is not readable CSV: {exc}") from exc
    for n, row in enumerate(rows, start=1):
        if n == 1 or not row or all(not c.strip() for c in row):
            continue
        if len(row) != len(COLUMNS):
            failures.append(
                ParseFailure(f"{name}:{n}", f"expected {len(COLUMNS)} fields, got {len(row)}", ",".join(row))
            )
            continue
        values, reason = _row(row)
        if reason:
            failures.append(ParseFailure(f"{name}:{n}", reason, ",".join(row)))
            continue
        for c, v in zip(COLUMNS, values, strict=True):
            cols[c].append(v)
        cols["line"].append(n)
    types = {**_TYPES, "line": pa.int64()}
    data = pa.table({c: pa.array(v, type=pa.string() if types[c] == _DICT else types[c]) for c, v in cols.items()})
    data = data.set_column(0, "item_id", data["item_id"].dictionary_encode())
    for c in ("benchmark", "suite", "checkpoint", "axis"):
        data = data.set_column(data.schema.get_field_index(c), c, data[c].dictionary_encode())
    checked, more = _validated(data, name)
    return checked, failures + more


def _row(row: list[str]) -> tuple[list[Any], str | None]:
    item, bench, suite, ckpt, axis, effort, seed, p = (c.strip() for c in row)
    for label, v in (("item_id", item), ("benchmark", bench), ("suite", suite), ("checkpoint", ckpt)):
        if not v:
            return [], f"{label} is empty"
    try:
        e = float(effort) if effort else None
        s = int(seed) if seed else None
        pv = float(p)
    except ValueError as exc:
        return [], f"effort must be a number, seed an integer and p_correct a number ({exc})"
    return [item, bench, suite, ckpt, axis, e, s, pv], None


def _validated(data: pa.Table, name: str) -> tuple[pa.Table, list[ParseFailure]]:
    """Rows whose axis, p_correct and names are valid; a ParseFailure (file:line) for each other row."""
    axis = pc.cast(data["axis"], pa.string())
    p = data["p_correct"]
    ok_axis = pc.fill_null(pc.is_in(axis, value_set=pa.array(list(EFFORT_UNIT))), False)
    ok_p = pc.fill_null(pc.and_(pc.greater_equal(p, 0.0), pc.less_equal(p, 1.0)), False)
    ok_effort = pc.fill_null(pc.is_finite(data["effort"]), True)
    ok_names = pc.and_(
        pc.and_(pc.is_valid(data["item_id"]), pc.is_valid(data["benchmark"])),
        pc.and_(pc.is_valid(data["suite"]), pc.is_valid(data["checkpoint"])),
    )
    good = pc.and_(pc.and_(ok_axis, ok_p), pc.and_(ok_effort, ok_names))
    n_bad = data.num_rows - pc.sum(pc.cast(good, pa.int64())).as_py() if data.num_rows else 0
    failures: list[ParseFailure] = []
    if n_bad:
        bad = data.filter(pc.invert(good)).to_pylist()
        for r in bad:
            reason = (
                f"axis {r['axis']!r} is not one of PT, SFT, RL, anchor"
                if r["axis"] not in EFFORT_UNIT
                else f"p_correct {r['p_correct']!r} is not a probability in [0, 1]"
                if r["p_correct"] is None or not 0 <= r["p_correct"] <= 1
                else "effort is not finite"
                if r["effort"] is not None and not np.isfinite(r["effort"])
                else "a name column is empty"
            )
            failures.append(ParseFailure(f"{name or 'panel.csv'}:{r['line']}", reason, str(r)))
        data = data.filter(good)
    return data, failures


def _codes(*arrays: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unique rows of integer columns: (first row of each unique combination, inverse index).

    The columns are combined into one mixed-radix int64 key, so one 1-D sort finds the rows.
    """
    code = np.zeros(len(arrays[0]), dtype=np.int64)
    for a in arrays:
        lo, hi = int(a.min()), int(a.max())
        code = code * (hi - lo + 1) + (a.astype(np.int64) - lo)
    _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1).astype(np.int32)


def _dict_parts(col: pa.ChunkedArray) -> tuple[np.ndarray, list[Any]]:
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    arr = arr.unify_dictionaries() if hasattr(arr, "unify_dictionaries") else arr
    return np.asarray(arr.indices.fill_null(-1)), arr.dictionary.to_pylist()


def _batch(data: pa.Table, name: str, sha256: str, n_failures: int) -> S.ItemBatch:
    bi, bench = _dict_parts(data["benchmark"])
    ii, items = _dict_parts(data["item_id"])
    si, suites = _dict_parts(data["suite"])
    ci, ckpts = _dict_parts(data["checkpoint"])
    ai, axes = _dict_parts(data["axis"])
    seed = data["seed"].to_numpy(zero_copy_only=False)
    seed_known = ~np.isnan(seed.astype(float))
    seed_code = np.where(seed_known, np.nan_to_num(seed.astype(float), nan=0) + 1, 0).astype(np.int64)
    effort = data["effort"].to_numpy(zero_copy_only=False).astype(float)

    item_first, item_inv = _codes(bi, ii)
    item_ids = [S.item_id(bench[bi[r]], items[ii[r]]) for r in item_first]
    ckpt_first, ckpt_inv = _codes(si, ci, seed_code)
    ckpt_rows = []
    for r in ckpt_first:
        s = int(seed[r]) if seed_known[r] else None
        ax = axes[ai[r]]
        ckpt_rows.append(
            {
                "checkpoint_id": S.checkpoint_id(suites[si[r]], ckpts[ci[r]], s),
                "suite": suites[si[r]],
                "checkpoint": ckpts[ci[r]],
                "seed": s,
                "axis": ax,
                "effort": None if np.isnan(effort[r]) else float(effort[r]),
                "effort_unit": EFFORT_UNIT[ax],
            }
        )
    run_first, run_inv = _codes(bi, ckpt_inv)
    run_rows = []
    for r in run_first:
        cid = ckpt_rows[ckpt_inv[r]]["checkpoint_id"]
        run_rows.append(
            {
                "eval_run_id": S.eval_run_id("panel-csv", sha256, bench[bi[r]], cid),
                "harness": "panel-csv",
                "task": bench[bi[r]],
                "checkpoint_id": cid,
                "locator": name,
            }
        )
    responses = pa.table(
        {
            "item_id": pa.DictionaryArray.from_arrays(pa.array(item_inv), pa.array(item_ids)),
            "checkpoint_id": pa.DictionaryArray.from_arrays(
                pa.array(ckpt_inv), pa.array([c["checkpoint_id"] for c in ckpt_rows])
            ),
            "eval_run_id": pa.DictionaryArray.from_arrays(
                pa.array(run_inv), pa.array([r["eval_run_id"] for r in run_rows])
            ),
            "seed": pc.cast(data["seed"], pa.int32()),
            "epoch": pa.array(np.ones(data.num_rows, dtype=np.int32)),
            "p_correct": data["p_correct"],
            "score_name": pa.DictionaryArray.from_arrays(
                pa.array(np.zeros(data.num_rows, np.int32)), pa.array(["p_correct"])
            ),
            "locator": pa.DictionaryArray.from_arrays(pa.array(np.zeros(data.num_rows, np.int32)), pa.array([name])),
            "line": data["line"],
        }
    )
    item_rows = [
        {
            "item_id": item_ids[k],
            "benchmark": bench[bi[r]],
            "source_item_id": items[ii[r]],
            "subtask": "",
            "split": "",
            "domain": X.domain_of(bench[bi[r]]),
        }
        for k, r in enumerate(item_first)
    ]
    return S.ItemBatch(
        items=S.table(item_rows, S.ITEM_SCHEMA),
        checkpoints=S.table(ckpt_rows, S.CHECKPOINT_SCHEMA),
        eval_runs=S.table(run_rows, S.EVAL_RUN_SCHEMA),
        responses=S.conform(responses, S.RESPONSE_SCHEMA, fill=False),
        locator=name,
        field_map={f"csv.{c}": "item_response/item/checkpoint" for c in COLUMNS},
        lines_read=data.num_rows + n_failures,
        raw_sha256=None,
    )
