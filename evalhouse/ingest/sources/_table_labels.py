"""The labels of a LaTeXML table: where the header ends, which columns label rows, and what a label says.

Pure functions over a :class:`~._latexml.Table` grid, shared by the extraction in
:mod:`._paper_tables`. Real arXiv tables put their headers anywhere: over two or three rows with
merged cells ("GPQA" / "Diamond"), with a metric-and-shots row that LaTeXML guessed into the body
("Acc. 5-shot" under a ``rowspan`` "Model" cell), with values marked up as ``th``. So the header is
found by content, not markup: the leading rows that hold no number and whose first cell is empty or
carried down from the row above (or that LaTeXML put in ``thead``). A row of one cell spanning the
whole table ("In Domain") labels the rows below it.

A label is read level by level (:func:`read_levels`): the words that name a metric ("pass@1",
"Acc.", "cons@64", "CodeForces rating"), the setup ("5-shot", "CoT", "%") and who ran it
("paper", "ours") are read off; what remains names the benchmark. The benchmark is named by the
label's own levels together ("GPQA" over "Diamond" is GPQA Diamond); a wider header over several
columns ("Open LLM Leaderboard v2") is a group, tried only after.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from evalhouse.curation.registry import Benchmark, Metric, load_registry, normalise_alias
from evalhouse.ingest.sources._latexml import Cell, Table, join_lines

SOURCE_KEY = "papers"
NUM = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)"
VALUE_RE = re.compile(
    rf"^(?P<v>{NUM})\s*(?P<pct>%)?\s*(?:(?:±|\+/-|\+-)\s*(?P<pm>{NUM})\s*%?|\(\s*(?P<par>{NUM})\s*\))?$"
)
SHOTS_RE = re.compile(r"\(?\s*(\d+)\s*-?\s*shots?\s*\)?", re.IGNORECASE)
_SHOTS_TOKEN = re.compile(r"(\d+)-?shots?", re.IGNORECASE)
_PASS_AT = re.compile(r"pass@(\d+)", re.IGNORECASE)
_VOTE_AT = re.compile(r"(?:cons|maj)@(\d+)", re.IGNORECASE)
_COT = {"cot", "w/ cot", "with cot", "chain-of-thought", "chain of thought"}
DECOR_RE = re.compile(r"\(\s*%\s*\)|[↑↓]|\(\s*\)")
_MODEL_HEADER_RE = re.compile(r"\b(?:models?|systems?|methods?|names?|llms?)\b", re.IGNORECASE)
_SIZE_RE = re.compile(r"^~?\d+(?:\.\d+)?\s*[kmbt]$", re.IGNORECASE)
#: The metric a majority vote over k samples reports (registry metric, ``cons@64`` / ``maj@8``).
VOTE_METRIC = "majority_vote_accuracy"


def is_number(text: str) -> bool:
    return VALUE_RE.match(text) is not None


# -- layout -------------------------------------------------------------------------------------


def _origins(table: Table, r: int) -> list[Cell]:
    """The cells that start in row ``r`` (a rowspan from above is not this row's)."""
    seen: dict[int, Cell] = {}
    for cell in table.grid[r]:
        if cell is not None and cell.row == r:
            seen.setdefault(id(cell), cell)
    return list(seen.values())


def is_group_row(table: Table, r: int) -> bool:
    """One non-empty, non-numeric cell across the whole table ("In Domain", "Open-source models")."""
    cells = {id(c): c for c in table.grid[r] if c is not None}
    if len(cells) != 1:
        return False
    cell = next(iter(cells.values()))
    return cell.colspan == table.n_cols and table.n_cols > 1 and bool(cell.text) and not is_number(cell.text)


def _numeric_row(table: Table, r: int) -> bool:
    return any(is_number(c.text) for c in _origins(table, r))


def header_rows(table: Table) -> int:
    """Leading rows that hold no number and are headers: in ``thead``, or the first row, or rows
    whose first cell is empty or carried down by a rowspan from the row above."""
    h = 0
    for r in range(table.n_rows):
        if _numeric_row(table, r) or is_group_row(table, r):
            break
        first = table.grid[r][0]
        head_marked = bool(_origins(table, r)) and all(c.in_head for c in _origins(table, r))
        carried = first is None or first.row < r or not first.text
        if r == 0 or head_marked or carried:
            h += 1
        else:
            break
    return h or 1


def body_rows(table: Table, h: int) -> list[int]:
    return [r for r in range(h, table.n_rows) if not is_group_row(table, r)]


def label_cols(table: Table, h: int) -> int:
    """Leading columns whose body cells are row headers or text, never numbers."""
    rows = body_rows(table, h)
    n = 0
    for c in range(table.n_cols):
        texts = [cell.text for r in rows if (cell := table.grid[r][c]) is not None and cell.text]
        if texts and not any(is_number(t) for t in texts):
            n += 1
        else:
            break
    return n


def group_label(table: Table, h: int, r: int) -> str | None:
    """The group row ("In Domain") above body row ``r``, if any."""
    for k in range(r - 1, h - 1, -1):
        if is_group_row(table, k):
            cell = table.grid[k][0]
            return cell.text if cell is not None else None
    return None


# -- levels of a label ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Level:
    """One header cell on a label's path: its text and how many columns (or rows) it spans."""

    text: str
    span: int


@dataclass
class Reading:
    """What a label's levels say once metric, setup and provenance words are read off."""

    path: tuple[str, ...]
    names: list[tuple[str, int]] = field(default_factory=list)  # (name text, span) top-down
    metrics: dict[str, tuple[Metric, dict[str, int]]] = field(default_factory=dict)  # word -> metric, params
    shots: int | None = None
    cot: bool = False
    percent: bool = False
    provenance: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)  # qualifiers that are none of these


@dataclass(frozen=True)
class Words:
    """The declared words of ``papers.yaml`` that :func:`read_levels` needs."""

    provenance: Mapping[str, str]  # "paper" -> what it says about who ran the number
    metric_words: Mapping[str, str]  # header spellings the registry's aliases miss ("acc." -> accuracy)


def metric_of(text: str, context: Sequence[str], words: Words) -> tuple[Metric, dict[str, int]] | None:
    """The metric ``text`` names, with its parameters: ``pass@k`` (k > 1 kept as a parameter),
    ``cons@k`` / ``maj@k`` (majority vote of k samples), a benchmark-specific metric named with its
    benchmark ("CodeForces" + "rating"), a registry alias, or a declared header spelling."""
    registry = load_registry()

    def lookup(name: str | None) -> Metric | None:  # a registered metric, never "kind.qualifier" ("Acc. 5-shot")
        metric = registry.metric_for(name) if name else None
        return metric if metric is not None and metric.id in registry.metrics else None

    plain = text.strip()
    if m := _PASS_AT.fullmatch(plain):
        metric = lookup("pass@1")
        k = int(m[1])
        return (metric, {} if k == 1 else {"k": k}) if metric is not None else None
    if m := _VOTE_AT.fullmatch(plain):
        metric = lookup(VOTE_METRIC)
        return (metric, {"samples": int(m[1])}) if metric is not None else None
    for other in context:
        if other and (metric := lookup(f"{other} {plain}")) is not None:
            return metric, {}
    for spelling in dict.fromkeys((plain, plain.rstrip("."))):
        if (metric := lookup(spelling)) is not None:
            return metric, {}
    declared = words.metric_words.get(normalise_alias(plain))
    metric = lookup(declared)
    return (metric, {}) if metric is not None else None


def _segments(text: str) -> list[str]:
    """ "HellaSwag (acc_norm, 10-shot)" -> ["HellaSwag", "acc_norm", "10-shot"]; "AIME24 pass@1, paper"
    -> ["AIME24 pass@1", "paper"]: the main text, then each parenthesised or comma-separated part."""
    inner = [p.strip() for group in re.findall(r"\(([^()]*)\)", text) for p in group.split(",")]
    main = re.sub(r"\([^()]*\)", " ", text)
    head, *rest = [p.strip() for p in main.split(",")]
    return [head, *[p for p in rest if p], *[p for p in inner if p]]


def _setup_word(token: str, reading: Reading) -> bool:
    low = token.casefold()
    if m := _SHOTS_TOKEN.fullmatch(low):
        reading.shots = int(m[1])
        return True
    if low in _COT:
        reading.cot = True
        return True
    if low == "%":
        reading.percent = True
        return True
    return False


def _metric_word(token: str, context: Sequence[str], words: Words, reading: Reading) -> bool:
    found = metric_of(token, context, words)
    if found is None:
        return False
    reading.metrics[token] = found
    return True


def _peel(segment: str, context: Sequence[str], words: Words, reading: Reading) -> str:
    """Read metric and setup words off ``segment``; what remains is (part of) a name."""
    if _setup_word(segment, reading) or _metric_word(segment, context, words, reading):
        return ""
    tokens = segment.split()
    while tokens and (_setup_word(tokens[-1], reading) or _metric_word(tokens[-1], context, words, reading)):
        tokens.pop()
    while tokens and (_setup_word(tokens[0], reading) or _metric_word(tokens[0], context, words, reading)):
        tokens.pop(0)
    return " ".join(tokens)


def read_levels(levels: Sequence[Level], words: Words) -> Reading:
    """Read a label's levels (top-down): metric, setup and provenance words off, names kept."""
    reading = Reading(path=tuple(lv.text for lv in levels))
    texts = [" ".join(DECOR_RE.sub(" ", lv.text).split()) for lv in levels]
    for lv, text in zip(levels, texts, strict=True):
        if "%" in lv.text:
            reading.percent = True
        if not text:
            continue
        if known(text) is not None:  # the whole level is a benchmark's name ("ARC (Challenge Set)")
            reading.names.append((text, lv.span))
            continue
        context = [t for t in texts if t and t != text]
        head, *quals = _segments(text)
        name = _peel(head, context, words, reading)
        for q in quals:
            if normalise_alias(q) in words.provenance:
                reading.provenance.append(normalise_alias(q))
            elif _peel(q, context, words, reading):
                reading.unread.append(q)
        if name:
            reading.names.append((name, lv.span))
    return reading


# -- benchmarks ---------------------------------------------------------------------------------


def known(text: str) -> Benchmark | None:
    """The registry benchmark a name denotes (aliases scoped to papers first, then global ones)."""
    if not text:
        return None
    registry = load_registry()
    name = " ".join(DECOR_RE.sub(" ", SHOTS_RE.sub(" ", text)).split())
    for cand in dict.fromkeys((" ".join(DECOR_RE.sub(" ", text).split()), name)):
        if cand and (bench := registry.benchmark_for(cand, SOURCE_KEY)) is not None:
            if _only_by_id(cand, bench) and family_of(cand) is not None:
                return None  # "AIME" is the id of AIME 2024 but the name of a family: which year?
            return bench
    return None


def _only_by_id(text: str, bench: Benchmark) -> bool:
    key = normalise_alias(text)
    named = {normalise_alias(a) for a in (bench.name, *bench.aliases)}
    named |= {normalise_alias(a) for a in bench.source_aliases.get(SOURCE_KEY, ())}
    return key == normalise_alias(bench.id) and key not in named


def family_of(text: str) -> str | None:
    """The registry family a name denotes when it names no benchmark ("ARC", "AIME"): ambiguous."""
    key = normalise_alias(text)
    for fam in load_registry().families.values():
        if key in {normalise_alias(fam.id), normalise_alias(fam.name)} or key == normalise_alias(
            re.sub(r"\s*\(.*\)$", "", fam.name)
        ):
            return fam.id
        short = re.search(r"\(([^()]+)\)$", fam.name)
        if short and key == normalise_alias(short[1]):
            return fam.id
    return None


def _joins(parts: Sequence[str]) -> list[str]:
    """The ways a label broken over levels may join: with spaces, by hyphen rule, run together."""
    return list(dict.fromkeys([" ".join(parts), join_lines(list(parts)), "".join(parts)]))


@dataclass(frozen=True)
class Named:
    """What a label's names denote: a registry benchmark, or the label a new one would carry."""

    bench: Benchmark | None
    name: str  # the label as the table writes it (the part that names the benchmark)
    group: tuple[str, ...]  # wider headers above it
    how: str  # how the name was read (recorded with every value)
    parts: tuple[str, ...] = ()  # the label's own levels, when it was printed over several


def name_benchmark(reading: Reading) -> Named | None:
    """The benchmark a label names: its own levels together first ("GPQA" + "Diamond"), then with
    the wider headers above them; None when no level names anything."""
    if not reading.names:
        return None
    own_span = reading.names[-1][1]
    own = [n for n, span in reading.names if span <= own_span]
    group = [n for n, span in reading.names if span > own_span]
    for parts, with_group in ((own, False), ([*group, *own], True)):
        for cand in _joins(parts):
            if (bench := known(cand)) is not None:
                how = f"header {cand!r} is registry benchmark {bench.id}"
                if with_group:
                    how += " (read with the header above it)"
                elif len(parts) > 1:
                    how += f" (label printed over {len(parts)} rows, joined)"
                return Named(bench, cand, tuple(group) if not with_group else (), how)
    return Named(None, " ".join(own), tuple(group), "", tuple(own) if len(own) > 1 else ())


def group_benchmark(named: Named) -> Benchmark | None:
    """A registry benchmark an unknown label sits under: named by a wider header above it, or by one
    of its own levels ("AIME 2024" over "Easy"): a subset, never guessed into a benchmark."""
    return next((b for g in (*named.group, *named.parts) if (b := known(g)) is not None), None)


# -- models and rows ----------------------------------------------------------------------------


def column_levels(table: Table, h: int, c: int) -> list[Level]:
    out: list[Level] = []
    seen: set[int] = set()
    for r in range(h):
        cell = table.grid[r][c]
        if cell is not None and cell.text and id(cell) not in seen:
            seen.add(id(cell))
            out.append(Level(cell.text, cell.colspan))
    return out


def row_levels(table: Table, r: int, labels: int) -> list[Level]:
    """A body row's label cells left to right (a rowspan group label first, the row's own last)."""
    out: list[Level] = []
    seen: set[int] = set()
    for c in range(labels):
        cell = table.grid[r][c]
        if cell is not None and cell.text and id(cell) not in seen:
            seen.add(id(cell))
            out.append(Level(cell.text, cell.rowspan))
    return out


def model_col(table: Table, h: int, labels: int) -> int:
    """Which label column names the model: one headed "Model"/"System"/"Method", else the first
    whose cells are not parameter counts ("7B"), else the last."""
    for c in range(labels):
        top = table.grid[0][c]
        if h and top is not None and _MODEL_HEADER_RE.search(top.text):
            return c
    rows = body_rows(table, h)
    for c in range(labels):
        texts = [cell.text for r in rows if (cell := table.grid[r][c]) is not None and cell.text]
        if texts and not all(_SIZE_RE.match(t) for t in texts):
            return c
    return labels - 1


def column_model(table: Table, h: int, c: int) -> tuple[str, Cell | None]:
    """A transposed table's model for column ``c``: its own header cells joined top-down (a model
    name broken over two header rows is one name); wider headers above are groups."""
    cells = []
    seen: set[int] = set()
    for r in range(h):
        cell = table.grid[r][c]
        if cell is not None and cell.text and id(cell) not in seen and cell.colspan == 1:
            seen.add(id(cell))
            cells.append(cell)
    return join_lines([cell.text for cell in cells]), (cells[-1] if cells else None)
