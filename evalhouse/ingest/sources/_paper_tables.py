"""Candidate result rows from one LaTeXML table: model × benchmark × metric × value, with locators.

Reading a table takes five decisions, each made from the table's own text and the registries,
and each refused (with the table, row and column) when the text does not settle it:

1. **headers** - the leading header rows (``ltx_th_column`` / ``thead``; else the first row), a
   column's header path top-down through merged cells ("Open LLM Leaderboard v1 > ARC-C"), and
   the leading label columns of the body;
2. **orientation** - the axis whose labels the benchmark registry knows carries benchmarks, the
   other models (a benchmark may sit at any level of a column's header path);
3. **models** - a label that is a metric, a statistic ("n", "p̂") or a role ("Ours") is no model;
4. **metric** - from the header path (whole-cell registry match), else the caption's declared
   metric words; two candidates or none is ambiguous;
5. **scale** - "%" in a header or the caption says percent; else the values of that metric in
   the table decide (one above 1: percent; all of two or more in [0, 1]: proportion); a lone value
   in [0, 1] is ambiguous.

Bold, underline and footnote marks are kept with each candidate; "x ± u" and "x (u)" give the
uncertainty, whose kind (standard error, deviation, CI half-width) only the caption can name.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evalhouse.curation.names import is_generic_name
from evalhouse.curation.registry import Benchmark, Metric, load_registry, normalise_alias
from evalhouse.ingest.sources import _table_labels as labels_
from evalhouse.ingest.sources._latexml import Cell, Table
from evalhouse.ingest.sources._table_labels import bench_name


@dataclass(frozen=True)
class Rules:
    non_result_captions: tuple[str, ...]
    statistic_labels: frozenset[str]
    statistic_patterns: tuple[re.Pattern[str], ...]
    caption_metrics: Mapping[str, str]
    uncertainty_words: Mapping[str, tuple[str, ...]]
    missing_cells: frozenset[str]


def rules_from(raw: Mapping[str, Any]) -> Rules:
    return Rules(
        non_result_captions=tuple(str(w).casefold() for w in raw["non_result_captions"]),
        statistic_labels=frozenset(_plain(str(w)) for w in raw["statistic_labels"]),
        statistic_patterns=tuple(re.compile(str(p)) for p in raw.get("statistic_patterns", ())),
        caption_metrics={normalise_alias(k): v for k, v in raw["caption_metrics"].items()},
        uncertainty_words={k: tuple(str(w).casefold() for w in v) for k, v in raw["uncertainty_words"].items()},
        missing_cells=frozenset(str(w).casefold() for w in raw["missing_cells"]),
    )


@dataclass(frozen=True)
class Candidate:
    table: str
    ordinal: int
    row: int  # 1-based grid row
    col: int  # 1-based grid column
    caption: str
    model: str
    benchmark_id: str
    benchmark_raw: str
    benchmark_name: str  # the form of the label the registry knows (shots and decorations off)
    header_path: tuple[str, ...]
    text: str
    value: float
    metric_id: str
    unit: str
    metric: Metric
    shots: int | None = None
    uncertainty: dict[str, Any] | None = None
    uncertainty_text: str | None = None
    bold: bool = False
    underline: bool = False
    markers: tuple[str, ...] = ()
    model_markers: tuple[str, ...] = ()
    group: str | None = None
    scale_why: str = ""

    @property
    def locator(self) -> str:
        return f"table {self.table} (#{self.ordinal}) row {self.row} col {self.col}"


@dataclass(frozen=True)
class Refusal:
    locator: str
    reason: str
    cell: str | None = None


@dataclass
class _Raw:
    """A cell on its way to a candidate: its value is read, its scale not yet decided."""

    row: int
    col: int
    model: str
    model_markers: tuple[str, ...]
    group: str | None
    bench: Benchmark
    bench_raw: str
    bench_name: str
    path: tuple[str, ...]
    cell: Cell
    value: float
    metric: Metric
    percent: bool
    shots: int | None
    unc: float | None
    unc_text: str | None
    extra: dict[str, Any] = field(default_factory=dict)


def _plain(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return normalise_alias("".join(ch for ch in decomposed if not unicodedata.combining(ch)))


def _where(table: Table, r: int | None = None, c: int | None = None) -> str:
    parts = [f"table {table.number} (#{table.ordinal})"]
    if r is not None:
        parts.append(f"row {r + 1}")
    if c is not None:
        parts.append(f"col {c + 1}")
    return " ".join(parts)


def not_a_model(label: str, rules: Rules) -> str | None:
    """Why ``label`` is not a model name, or None when it may be one."""
    plain = _plain(label)
    if not plain:
        return "it is empty"
    if load_registry().metric_for(label) is not None:
        return "it names a metric"
    if (
        plain in rules.statistic_labels
        or re.fullmatch(r"[a-zα-ω]|[a-zα-ω]\s*\(.*\)", plain)
        or any(p.fullmatch(plain) for p in rules.statistic_patterns)
    ):
        return "it names a statistic, not a model"
    if re.search(r"\(\s*[a-z]+\s*/\s*[a-z]+\s*\)", plain):
        return "it carries a unit"
    return None


def _caption_metric(caption: str, rules: Rules) -> tuple[str | None, list[str]]:
    text = normalise_alias(caption)
    hits: list[tuple[int, int, str]] = []
    for phrase, metric in rules.caption_metrics.items():
        for m in re.finditer(rf"(?<![a-z0-9]){re.escape(phrase)}s?(?![a-z0-9])", text):
            hits.append((m.start(), m.end(), metric))
    kept = [h for h in hits if not any(o[0] <= h[0] and h[1] <= o[1] and o != h for o in hits)]
    found = sorted({h[2] for h in kept})
    return (found[0] if len(found) == 1 else None), found


def _metric(path: Sequence[str], bench_level: int, caption: str, rules: Rules) -> tuple[Metric | None, str | None]:
    registry = load_registry()
    words: list[str] = []
    for i, level in enumerate(path):
        name, _shots, quals = bench_name(level)
        words += list(quals) if i == bench_level else [level, name, *quals]
    named = {m.id: m for w in words if (m := registry.metric_for(w)) is not None}
    if len(named) == 1:
        return next(iter(named.values())), None
    if len(named) > 1:
        return None, f"the header names several metrics ({', '.join(sorted(named))})"
    metric_id, found = _caption_metric(" ".join([*path, caption]), rules)
    if metric_id is not None:
        return registry.metric_for(metric_id), None
    if found:
        return None, f"the header and caption name several metrics ({', '.join(found)})"
    return None, "neither the header nor the caption names a metric"


def _uncertainty_kind(caption: str, rules: Rules) -> str | None:
    text = caption.casefold()
    kinds = [k for k, words in rules.uncertainty_words.items() if any(w in text for w in words)]
    return kinds[0] if len(kinds) == 1 else None


def extract(table: Table, rules: Rules) -> Iterator[Candidate | Refusal]:
    """Candidates and refusals of one table (see the module doc for the decisions)."""
    if table.n_rows == 0 or table.n_cols == 0:
        yield Refusal(_where(table), "the table has no cells")
        return
    caption = table.caption.casefold()
    word = next((w for w in rules.non_result_captions if w in caption), None)
    if word is not None:
        yield Refusal(_where(table), f"not a results table: the caption says {word!r} ({table.caption[:120]!r})")
        return
    h = labels_.header_rows(table)
    labels = labels_.label_cols(table, h)
    if h >= table.n_rows or labels == 0:
        yield Refusal(_where(table), f"no body to read: {h} header row(s), {labels} label column(s)")
        return
    col_hits = {c: b for c in range(labels, table.n_cols) if (b := labels_.column_benchmark(table, h, c)) is not None}
    row_hits = {
        r: b
        for r in range(h, table.n_rows)
        if (b := labels_.benchmark_of(labels_.row_label(table, r, labels))[0]) is not None
    }
    if col_hits and len(col_hits) >= len(row_hits):
        yield from _read(table, h, labels, rules, transposed=False)
    elif row_hits:
        yield from _read(table, h, labels, rules, transposed=True)
    else:
        yield Refusal(_where(table), "not a results table: no row or column label names a benchmark in the registry")


@dataclass(frozen=True)
class _Layout:
    table: Table
    h: int  # header rows
    labels: int  # label columns
    rules: Rules
    transposed: bool


@dataclass(frozen=True)
class _Place:
    """What a cell's row and column say: its benchmark, model, header path and row group."""

    bench: Benchmark
    bench_raw: str
    bench_name: str
    bench_level: int
    shots: int | None
    path: tuple[str, ...]
    model_cell: Cell | None
    group: str | None


def _read(table: Table, h: int, labels: int, rules: Rules, *, transposed: bool) -> Iterator[Candidate | Refusal]:
    names = labels_.model_labels(table, h, labels, transposed=transposed)
    if names and all(not_a_model(n, rules) is not None for n in names):
        axis = "column headers" if transposed else "row labels"
        shown = ", ".join(repr(n) for n in names[:6])
        yield Refusal(
            _where(table),
            f"ambiguous: the {'rows' if transposed else 'columns'} name benchmarks but the {axis} name no models "
            f"({shown}: statistics, metrics or units); the model is not in the table",
        )
        return
    layout = _Layout(table, h, labels, rules, transposed)
    raws: list[_Raw] = []
    for r in range(h, table.n_rows):
        for c in range(labels, table.n_cols):
            cell = table.grid[r][c]
            if cell is None or cell.row != r or cell.col != c:
                continue  # covered by a span: read once, at its origin
            got = _cell(layout, cell)
            if isinstance(got, Refusal):
                yield got
            elif got is not None:
                raws.append(got)
    yield from _scaled(table, raws, rules)


def _place(lay: _Layout, r: int, c: int) -> _Place | str:
    """The benchmark, model and path of grid position (r, c), or why they cannot be told."""
    table = lay.table
    if lay.transposed:
        label = labels_.row_label(table, r, lay.labels)
        bench, shots, name = labels_.benchmark_of(label)
        if bench is None:
            return f"row label {label!r} names no benchmark in the registry"
        model_cell = next((table.grid[k][c] for k in range(lay.h - 1, -1, -1) if table.grid[k][c] is not None), None)
        return _Place(bench, label, name, 0, shots, (label, *labels_.header_path(table, lay.h, c)), model_cell, None)
    path = labels_.header_path(table, lay.h, c)
    hit = labels_.column_benchmark(table, lay.h, c)
    if hit is None:
        return f"header {' > '.join(path) or '(empty)'!r} names no benchmark in the registry"
    bench, level = hit
    _, shots, name = labels_.benchmark_of(path[level])
    col = labels_.model_col(table, lay.h, lay.labels)
    return _Place(
        bench, path[level], name, level, shots, path, table.grid[r][col], labels_.row_group(table, r, lay.labels, col)
    )


def _cell(lay: _Layout, cell: Cell) -> _Raw | Refusal | None:
    table, rules, text = lay.table, lay.rules, cell.text
    where = _where(table, cell.row, cell.col)
    if text.casefold() in rules.missing_cells:
        return None
    place = _place(lay, cell.row, cell.col)
    if isinstance(place, str):
        return Refusal(where, place, text)
    model = place.model_cell.text if place.model_cell is not None else ""
    why = not_a_model(model, rules)
    if why is not None:
        return Refusal(where, f"no model: {model!r} ({why})", text)
    if is_generic_name(model, load_registry().name_rules):
        return Refusal(where, f"the table calls the model {model!r}, a role, not a name", text)
    match = labels_.VALUE_RE.match(text)
    if match is None:
        return Refusal(where, f"cell {text!r} is not a number", text)
    metric, problem = _metric(place.path, place.bench_level, table.caption, rules)
    if metric is None:
        return Refusal(where, f"no metric for {place.bench_raw!r}: {problem}", text)
    caption = table.caption
    percent = bool(match["pct"]) or any("%" in p for p in place.path) or "(%)" in caption or "in %" in caption
    unc = match["pm"] or match["par"]
    return _Raw(
        row=cell.row, col=cell.col, model=model, model_markers=place.model_cell.markers if place.model_cell else (),
        group=place.group, bench=place.bench, bench_raw=place.bench_raw, bench_name=place.bench_name,
        path=place.path, cell=cell, value=float(match["v"]), metric=metric, percent=percent, shots=place.shots,
        unc=float(unc) if unc else None,
        unc_text=(f"± {match['pm']}" if match["pm"] else f"({match['par']})") if unc else None,
    )  # fmt: skip


def _scaled(table: Table, raws: list[_Raw], rules: Rules) -> Iterator[Candidate | Refusal]:
    kind = _uncertainty_kind(table.caption, rules)
    by_metric: dict[str, list[_Raw]] = {}
    for raw in raws:
        by_metric.setdefault(raw.metric.id, []).append(raw)
    for group in by_metric.values():
        values = [g.value for g in group]
        for raw in group:
            unit, why = _unit(raw, values)
            if unit is None:
                yield Refusal(_where(table, raw.row, raw.col), why, raw.cell.text)
                continue
            yield Candidate(
                table=table.number, ordinal=table.ordinal, row=raw.row + 1, col=raw.col + 1, caption=table.caption,
                model=raw.model, benchmark_id=raw.bench.id, benchmark_raw=raw.bench_raw,
                benchmark_name=raw.bench_name, header_path=raw.path,
                text=raw.cell.text, value=raw.value, metric_id=raw.metric.id, unit=unit, metric=raw.metric,
                shots=raw.shots, uncertainty=_uncertainty(kind, raw), uncertainty_text=raw.unc_text,
                bold=raw.cell.bold, underline=raw.cell.underline, markers=raw.cell.markers,
                model_markers=raw.model_markers, group=raw.group, scale_why=why,
            )  # fmt: skip


def _unit(raw: _Raw, values: list[float]) -> tuple[str | None, str]:
    metric = raw.metric
    if metric.unit != "proportion":
        return metric.unit, f"{metric.id} is on its own scale ({metric.unit})"
    if raw.percent:
        return "percent", "the header or caption marks percentages (%)"
    if any(v > 1 for v in values):
        return "percent", f"a {metric.id} value in this table exceeds 1, so the table writes percentages"
    if len(values) >= 2:
        return "proportion", f"all {len(values)} {metric.id} values of the table lie in [0, 1]"
    return None, (
        f"ambiguous scale: {raw.value!r} ({metric.id}) could be a proportion or a percent and the table "
        "has no other value or '%' to tell"
    )


def _uncertainty(kind: str | None, raw: _Raw) -> dict[str, Any] | None:
    if raw.unc is None or kind is None:
        return None
    if kind == "standard_error":
        return {"standard_error": {"value": raw.unc}}
    if kind == "standard_deviation":
        return {"standard_deviation": raw.unc}
    return {"confidence_interval": {"lower": raw.value - raw.unc, "upper": raw.value + raw.unc}}
