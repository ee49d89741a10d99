"""Candidate result rows from one LaTeXML table: model × benchmark × metric × value, with locators.

Reading a table takes six decisions, each made from the table's own text and the registries,
each recorded with the value, and each refused (with the table, row and column) when the text
does not settle it:

1. **layout** - the header rows (found by content: :func:`._table_labels.header_rows`), the label
   columns, and the group rows ("In Domain") of the body;
2. **orientation** - the axis whose labels name registry benchmarks carries benchmarks, the other
   models (a transposed table names its models in the header, one per column);
3. **benchmark** - the label's own levels together name it ("GPQA" over "Diamond" is GPQA
   Diamond); a label the registry does not know is a **new benchmark named by the paper's own
   header** (registered provisionally when loaded, never merged with a registry benchmark), unless
   it names a registry family but not which member ("ARC"), sits under a registry benchmark (a
   subset), or is not a benchmark at all ("Params"); an average column or row ("Avg.") is a
   composite of *this table* (scoped to the paper and table);
4. **models** - a label that is a metric, a statistic ("n", "p̂") or a role ("Ours") is no model;
   a role word beside a name ("LIMO ours(817)") is kept as a marker, not in the name;
5. **metric and setup** - from the label ("pass@1", "cons@64", "Acc. 5-shot", "CodeForces rating";
   shots and CoT are setup; pass@k and cons@k keep k), else the caption's declared metric words;
   an average takes the metric of what it averages, or ``score`` when that is mixed;
6. **scale** - "%" in a label or the caption says percent; else the values of that metric in the
   table decide (one above 1: percent; all of two or more in [0, 1]: proportion).

Bold, underline and footnote marks are kept with each candidate; "x ± u" and "x (u)" give the
uncertainty, whose kind (standard error, deviation, CI half-width) only the caption can name. A
column a header marks as quoted from another paper ("paper") or run by the authors ("ours") keeps
that as the candidate's provenance.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from evalhouse.common.naming import slug
from evalhouse.curation.names import is_generic_name
from evalhouse.curation.registry import Metric, load_registry, normalise_alias
from evalhouse.ingest.sources import _table_labels as labels_
from evalhouse.ingest.sources._latexml import Cell, Table
from evalhouse.ingest.sources._table_labels import Named, Reading, Words

#: What a candidate's benchmark is: a registry benchmark, one the paper's header names that the
#: registry does not know (registered provisionally when loaded), or an average over the table.
REGISTRY, NEW, TABLE_AGGREGATE = "registry", "new from the paper's header", "table aggregate"
#: The metric of an average over columns of different metrics.
MIXED_METRIC = "score"


@dataclass(frozen=True)
class Rules:
    non_result_captions: tuple[str, ...]
    statistic_labels: frozenset[str]
    statistic_patterns: tuple[re.Pattern[str], ...]
    caption_metrics: Mapping[str, str]
    uncertainty_words: Mapping[str, tuple[str, ...]]
    missing_cells: frozenset[str]
    words: Words
    aggregate_labels: frozenset[str]
    not_benchmarks: frozenset[str]
    role_words: tuple[str, ...]


def rules_from(raw: Mapping[str, Any]) -> Rules:
    return Rules(
        non_result_captions=tuple(str(w).casefold() for w in raw["non_result_captions"]),
        statistic_labels=frozenset(_plain(str(w)) for w in raw["statistic_labels"]),
        statistic_patterns=tuple(re.compile(str(p)) for p in raw.get("statistic_patterns", ())),
        caption_metrics={normalise_alias(k): v for k, v in raw["caption_metrics"].items()},
        uncertainty_words={k: tuple(str(w).casefold() for w in v) for k, v in raw["uncertainty_words"].items()},
        missing_cells=frozenset(str(w).casefold() for w in raw["missing_cells"]),
        words=Words(
            provenance={normalise_alias(k): str(v) for k, v in raw["provenance_words"].items()},
            metric_words={normalise_alias(k): str(v) for k, v in raw["header_metric_words"].items()},
        ),
        aggregate_labels=frozenset(_plain(str(w)) for w in raw["aggregate_labels"]),
        not_benchmarks=frozenset(_plain(str(w)) for w in raw["not_benchmarks"]),
        role_words=tuple(str(w).casefold() for w in raw["role_words"]),
    )


@dataclass(frozen=True)
class Candidate:
    table: str
    ordinal: int
    row: int  # 1-based grid row
    col: int  # 1-based grid column
    caption: str
    model: str
    benchmark_id: str  # the registry id, or the id the new or aggregate benchmark is registered under
    benchmark_raw: str
    benchmark_name: str  # the dataset name the record carries (what the loader resolves again)
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
    benchmark_status: str = REGISTRY
    benchmark_why: str = ""
    metric_why: str = ""
    metric_params: Mapping[str, int] = field(default_factory=dict)
    setup: Mapping[str, str] = field(default_factory=dict)
    provenance: str | None = None

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

    cell: Cell
    model: str
    model_markers: tuple[str, ...]
    group: str | None
    bench_id: str
    bench_raw: str
    bench_name: str
    status: str
    bench_why: str
    path: tuple[str, ...]
    value: float
    metric: Metric | None
    metric_why: str
    params: dict[str, int]
    setup: dict[str, str]
    percent: bool
    shots: int | None
    unc: float | None
    unc_text: str | None
    provenance: str | None


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


def model_name(label: str, rules: Rules) -> tuple[str, tuple[str, ...]]:
    """The model a label names and the role words beside it ("LIMO ours(817)" -> "LIMO (817)", ours)."""
    markers: list[str] = []
    name = label
    for word in rules.role_words:
        pattern = re.compile(rf"(?<![\w-]){re.escape(word)}(?![\w-])", re.IGNORECASE)
        rest = " ".join(pattern.sub(" ", name).split())
        rest = re.sub(r"\(\s*\)", "", rest).strip()
        if rest != name and re.search(r"\w", rest):
            markers.append(word)
            name = re.sub(r"\s+\(", " (", rest)
    return name, tuple(markers)


def _caption_metric(caption: str, rules: Rules) -> tuple[str | None, list[str]]:
    text = normalise_alias(caption)
    hits: list[tuple[int, int, str]] = []
    for phrase, metric in rules.caption_metrics.items():
        for m in re.finditer(rf"(?<![a-z0-9]){re.escape(phrase)}s?(?![a-z0-9])", text):
            hits.append((m.start(), m.end(), metric))
    kept = [h for h in hits if not any(o[0] <= h[0] and h[1] <= o[1] and o != h for o in hits)]
    found = sorted({h[2] for h in kept})
    return (found[0] if len(found) == 1 else None), found


def _uncertainty_kind(caption: str, rules: Rules) -> str | None:
    text = caption.casefold()
    kinds = [k for k, words in rules.uncertainty_words.items() if any(w in text for w in words)]
    return kinds[0] if len(kinds) == 1 else None


# -- the table ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Layout:
    table: Table
    rules: Rules
    scope: str  # the paper ("arXiv:2502.11089v1"): an average column is a composite of its table
    h: int
    labels: int
    transposed: bool
    col_reading: dict[int, Reading]
    row_reading: dict[int, Reading]
    col_named: dict[int, Named | None]
    row_named: dict[int, Named | None]


def extract(table: Table, rules: Rules, scope: str = "") -> Iterator[Candidate | Refusal]:
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
    body = labels_.body_rows(table, h)
    if not body or labels == 0:
        yield Refusal(_where(table), f"no body to read: {h} header row(s), {labels} label column(s)")
        return
    col_reading = {
        c: labels_.read_levels(labels_.column_levels(table, h, c), rules.words) for c in range(labels, table.n_cols)
    }
    row_reading = {r: labels_.read_levels(labels_.row_levels(table, r, labels), rules.words) for r in body}
    col_named = {c: labels_.name_benchmark(rd) for c, rd in col_reading.items()}
    row_named = {r: labels_.name_benchmark(rd) for r, rd in row_reading.items()}
    col_hits = sum(1 for n in col_named.values() if n is not None and n.bench is not None)
    row_hits = sum(1 for n in row_named.values() if n is not None and n.bench is not None)
    if not col_hits and not row_hits:
        yield Refusal(_where(table), "not a results table: no row or column label names a benchmark in the registry")
        return
    lay = _Layout(
        table, rules, scope, h, labels, not (col_hits and col_hits >= row_hits),
        col_reading, row_reading, col_named, row_named,
    )  # fmt: skip
    yield from _read(lay, body)


def _models(lay: _Layout, body: list[int]) -> dict[int, tuple[str, Cell | None]]:
    """Model label per row (or, transposed, per column), as printed."""
    table = lay.table
    if lay.transposed:
        return {c: labels_.column_model(table, lay.h, c) for c in range(lay.labels, table.n_cols)}
    col = labels_.model_col(table, lay.h, lay.labels)
    out: dict[int, tuple[str, Cell | None]] = {}
    for r in body:
        cell = table.grid[r][col]
        out[r] = (cell.text if cell is not None else "", cell)
    return out


def _read(lay: _Layout, body: list[int]) -> Iterator[Candidate | Refusal]:
    table = lay.table
    models = _models(lay, body)
    names = list(dict.fromkeys(text for text, _cell in models.values() if text))
    if names and all(not_a_model(n, lay.rules) is not None for n in names):
        axis = "column headers" if lay.transposed else "row labels"
        shown = ", ".join(repr(n) for n in names[:6])
        yield Refusal(
            _where(table),
            f"ambiguous: the {'rows' if lay.transposed else 'columns'} name benchmarks but the {axis} name no models "
            f"({shown}: statistics, metrics or units); the model is not in the table",
        )
        return
    raws: list[_Raw] = []
    for r in body:
        for c in range(lay.labels, table.n_cols):
            cell = table.grid[r][c]
            if cell is None or cell.row != r or cell.col != c:
                continue  # covered by a span: read once, at its origin
            got = _cell(lay, cell, models[c if lay.transposed else r])
            if isinstance(got, Refusal):
                yield got
            elif got is not None:
                raws.append(got)
    yield from _aggregate_metrics(lay, raws)
    yield from _scaled(table, [raw for raw in raws if raw.metric is not None], lay.rules)


def _bench_place(lay: _Layout, r: int, c: int) -> tuple[Reading, Named | None, Reading]:
    """The benchmark axis reading and name of position (r, c), and the other axis's reading."""
    if lay.transposed:
        return lay.row_reading[r], lay.row_named[r], lay.col_reading[c]
    return lay.col_reading[c], lay.col_named[c], lay.row_reading[r]


def _group(lay: _Layout, r: int, model_cell: Cell | None) -> str | None:
    table = lay.table
    parts: list[str] = []
    if not lay.transposed:
        for c in range(lay.labels):
            cell = table.grid[r][c]
            if cell is not None and cell.text and cell is not model_cell:
                parts.append(cell.text)
    elif lay.labels > 1:
        parts += [lv.text for lv in labels_.row_levels(table, r, lay.labels)[:-1]]
    if (label := labels_.group_label(table, lay.h, r)) is not None:
        parts.insert(0, label)
    return " / ".join(dict.fromkeys(parts)) or None


def _benchmark(lay: _Layout, named: Named | None, reading: Reading) -> tuple[str, str, str, str] | str:
    """``(id, dataset name, status, why)`` of a label, or why it names no benchmark."""
    rules = lay.rules
    path = " > ".join(reading.path) or "(empty)"
    if named is None:
        return f"header {path!r} names no benchmark: it holds only metric or setup words"
    plain = _plain(named.name).rstrip(".").strip()
    if plain in rules.aggregate_labels:
        number = lay.table.number if lay.table.number != "?" else f"#{lay.table.ordinal}"
        name = f"{lay.scope} table {number}: {named.name}".strip()
        why = f"{named.name!r} averages the other labels of this table: a composite of this table only"
        return f"{labels_.SOURCE_KEY}.{slug(name, sep='_', default='unnamed')}", name, TABLE_AGGREGATE, why
    if named.bench is not None:
        return named.bench.id, named.name, REGISTRY, named.how
    label = repr(named.name)
    if (family := labels_.family_of(named.name)) is not None:
        return f"{label} names no benchmark in the registry: it names the family {family}, not which of its benchmarks"
    if (wider := labels_.group_benchmark(named)) is not None:
        return f"{label} names no benchmark in the registry; it sits under {wider.id} (a subset is never guessed)"
    if plain in rules.not_benchmarks or plain in rules.statistic_labels:
        return f"{label} is not a benchmark (a model property or a statistic)"
    if reading.unread:
        return f"{label} names no benchmark in the registry and carries qualifiers it cannot read ({reading.unread})"
    why = f"{label} is not in the registry: a new benchmark named by the paper's own header (registered provisionally)"
    return f"{labels_.SOURCE_KEY}.{slug(named.name, sep='_', default='unnamed')}", named.name, NEW, why


def _metric(
    lay: _Layout, readings: tuple[Reading, Reading], aggregate: bool
) -> tuple[Metric | None, dict[str, int], str] | str:
    """The cell's metric from its labels, else the caption; an average's metric may wait."""
    found: dict[tuple[str, tuple[tuple[str, int], ...]], tuple[Metric, dict[str, int], str]] = {}
    for reading in readings:
        for word, (metric, params) in reading.metrics.items():
            found.setdefault((metric.id, tuple(sorted(params.items()))), (metric, params, word))
    if len(found) == 1:
        metric, params, word = next(iter(found.values()))
        return metric, params, f"the header says {word!r}"
    if len(found) > 1:
        return f"the header names several metrics ({', '.join(sorted(w for *_, w in found.values()))})"
    metric_id, words = _caption_metric(lay.table.caption, lay.rules)
    if metric_id is not None and (metric := load_registry().metric_for(metric_id)) is not None:
        return metric, {}, f"the caption names {metric_id}"
    if words:
        return f"the caption names several metrics ({', '.join(words)})"
    if aggregate:
        return None, {}, ""
    return "neither the header nor the caption names a metric"


def _cell(lay: _Layout, cell: Cell, model: tuple[str, Cell | None]) -> _Raw | Refusal | None:
    table, rules, text = lay.table, lay.rules, cell.text
    where = _where(table, cell.row, cell.col)
    if text.casefold() in rules.missing_cells:
        return None
    reading, named, other = _bench_place(lay, cell.row, cell.col)
    bench = _benchmark(lay, named, reading)
    if isinstance(bench, str):
        return Refusal(where, bench, text)
    bench_id, bench_name, status, bench_why = bench
    assert named is not None  # a label that names nothing was refused above
    label, model_cell = model
    why = not_a_model(label, rules)
    if why is not None:
        return Refusal(where, f"no model: {label!r} ({why})", text)
    name, markers = model_name(label, rules)
    if is_generic_name(name, load_registry().name_rules):
        return Refusal(where, f"the table calls the model {name!r}, a role, not a name", text)
    match = labels_.VALUE_RE.match(text)
    if match is None:
        return Refusal(where, f"cell {text!r} is not a number", text)
    metric = _metric(lay, (reading, other), status == TABLE_AGGREGATE)
    if isinstance(metric, str):
        if status == NEW:
            return Refusal(where, f"{named.name!r} names no benchmark in the registry and {metric}", text)
        return Refusal(where, f"no metric for {bench_name!r}: {metric}", text)
    shots = {s for s in (reading.shots, other.shots) if s is not None}
    if len(shots) > 1:
        return Refusal(where, f"the labels name several shot counts ({sorted(shots)})", text)
    setup: dict[str, str] = {}
    if shots:
        setup["shots"] = str(next(iter(shots)))
    if reading.cot or other.cot:
        setup["cot"] = "true"
    provenance = [*reading.provenance, *other.provenance]
    caption = table.caption
    percent = bool(match["pct"]) or reading.percent or other.percent or "(%)" in caption or "in %" in caption
    unc = match["pm"] or match["par"]
    return _Raw(
        cell=cell, model=name, model_markers=(*(model_cell.markers if model_cell else ()), *markers),
        group=None if status == TABLE_AGGREGATE else _group(lay, cell.row, model_cell),
        bench_id=bench_id, bench_raw=named.name, bench_name=bench_name, status=status, bench_why=bench_why,
        path=(*reading.path,),
        value=float(match["v"]), metric=metric[0], metric_why=metric[2], params=metric[1], setup=setup,
        percent=percent, shots=int(setup["shots"]) if "shots" in setup else None,
        unc=float(unc) if unc else None,
        unc_text=(f"± {match['pm']}" if match["pm"] else f"({match['par']})") if unc else None,
        provenance=" ".join(dict.fromkeys(provenance)) or None,
    )  # fmt: skip


def _aggregate_metrics(lay: _Layout, raws: list[_Raw]) -> Iterator[Refusal]:
    """An average with no metric of its own takes the metric of what it averages (the same model's
    other values in the table), or ``score`` when those differ."""
    registry = load_registry()
    for raw in raws:
        if raw.status != TABLE_AGGREGATE or raw.metric is not None:
            continue
        others = [o for o in raws if o.model == raw.model and o.status != TABLE_AGGREGATE and o.metric is not None]
        kinds = sorted({o.metric.id for o in others if o.metric is not None})
        if len(kinds) == 1:
            raw.metric = next(o.metric for o in others if o.metric is not None)
            raw.metric_why = f"an average of {len(others)} {kinds[0]} values of this model in the table"
        elif kinds:
            raw.metric = registry.metric_for(MIXED_METRIC)
            raw.metric_why = f"an average over mixed metrics ({', '.join(kinds)}): {MIXED_METRIC}"
        else:
            yield Refusal(
                _where(lay.table, raw.cell.row, raw.cell.col),
                f"no metric for {raw.bench_raw!r}: an average of nothing this table settles",
                raw.cell.text,
            )


def _scaled(table: Table, raws: list[_Raw], rules: Rules) -> Iterator[Candidate | Refusal]:
    kind = _uncertainty_kind(table.caption, rules)
    by_metric: dict[str, list[_Raw]] = {}
    for raw in raws:
        assert raw.metric is not None
        by_metric.setdefault(raw.metric.id, []).append(raw)
    for group in by_metric.values():
        values = [g.value for g in group]
        for raw in group:
            assert raw.metric is not None
            unit, why = _unit(raw, raw.metric, values)
            if unit is None:
                yield Refusal(_where(table, raw.cell.row, raw.cell.col), why, raw.cell.text)
                continue
            yield Candidate(
                table=table.number, ordinal=table.ordinal, row=raw.cell.row + 1, col=raw.cell.col + 1,
                caption=table.caption, model=raw.model, benchmark_id=raw.bench_id, benchmark_raw=raw.bench_raw,
                benchmark_name=raw.bench_name, header_path=raw.path, text=raw.cell.text, value=raw.value,
                metric_id=raw.metric.id, unit=unit, metric=raw.metric, shots=raw.shots,
                uncertainty=_uncertainty(kind, raw), uncertainty_text=raw.unc_text,
                bold=raw.cell.bold, underline=raw.cell.underline, markers=raw.cell.markers,
                model_markers=raw.model_markers, group=raw.group, scale_why=why,
                benchmark_status=raw.status, benchmark_why=raw.bench_why, metric_why=raw.metric_why,
                metric_params=raw.params, setup=raw.setup, provenance=raw.provenance,
            )  # fmt: skip


def _unit(raw: _Raw, metric: Metric, values: list[float]) -> tuple[str | None, str]:
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
