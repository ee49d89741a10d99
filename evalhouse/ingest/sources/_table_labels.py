"""The labels of a LaTeXML table: header rows and paths, label columns, which axis names what.

Pure functions over a :class:`~._latexml.Table` grid, shared by the extraction in
:mod:`._paper_tables`: where the header ends, which leading columns are labels, a column's
header path through merged cells, which label column names the model (or, transposed, the
benchmark), and the benchmark a label names through the registry (scope ``papers``).
"""

from __future__ import annotations

import re

from evalhouse.curation.registry import Benchmark, load_registry
from evalhouse.ingest.sources._latexml import Table

SOURCE_KEY = "papers"
NUM = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)"
VALUE_RE = re.compile(
    rf"^(?P<v>{NUM})\s*(?P<pct>%)?\s*(?:(?:±|\+/-|\+-)\s*(?P<pm>{NUM})\s*%?|\(\s*(?P<par>{NUM})\s*\))?$"
)
SHOTS_RE = re.compile(r"\(?\s*(\d+)\s*-?\s*shots?\s*\)?", re.IGNORECASE)
DECOR_RE = re.compile(r"\(\s*%\s*\)|[↑↓]|\(\s*\)")
_MODEL_HEADER_RE = re.compile(r"\b(?:models?|systems?|methods?|names?|llms?)\b", re.IGNORECASE)
_SIZE_RE = re.compile(r"^~?\d+(?:\.\d+)?\s*[kmbt]$", re.IGNORECASE)


def bench_name(text: str) -> tuple[str, int | None, tuple[str, ...]]:
    """ "HellaSwag (acc_norm, 10-shot)" -> ("HellaSwag", 10, ("acc_norm",)): name, shots, qualifiers."""
    shots_match = SHOTS_RE.search(text)
    shots = int(shots_match[1]) if shots_match else None
    quals: list[str] = []
    for inner in re.findall(r"\(([^()]*)\)", text):
        for piece in inner.split(","):
            part = piece.strip()
            if part and part != "%" and not SHOTS_RE.fullmatch(part):
                quals.append(part)
    name = re.sub(r"\([^()]*\)", " ", text) if "(" in text else text
    return " ".join(DECOR_RE.sub(" ", name).split()), shots, tuple(quals)


def benchmark_of(text: str) -> tuple[Benchmark | None, int | None, str]:
    """The benchmark a label names: the whole label first ("AI2 Reasoning Challenge (Challenge
    Set)"), then without its parentheses and shot count ("MMLU (5-shot)")."""
    registry = load_registry()
    name, shots, _quals = bench_name(text)
    for candidate in (" ".join(DECOR_RE.sub(" ", text).split()), name):
        if candidate and (bench := registry.benchmark_for(candidate, SOURCE_KEY)) is not None:
            return bench, shots, candidate
    return None, shots, name


def header_rows(table: Table) -> int:
    h = 0
    for row in table.grid:
        cells = [c for c in row if c is not None and c.text]
        if cells and all(c.header for c in cells):
            h += 1
        else:
            break
    return h or 1


def is_number(text: str) -> bool:
    return VALUE_RE.match(text) is not None


def label_cols(table: Table, h: int) -> int:
    """Leading columns whose body cells are row headers or text, never numbers."""
    n = 0
    for c in range(table.n_cols):
        body = [table.grid[r][c] for r in range(h, table.n_rows)]
        texts = [cell.text for cell in body if cell is not None and cell.text]
        if texts and not any(is_number(t) for t in texts):
            n += 1
        else:
            break
    return n


def header_path(table: Table, h: int, c: int) -> tuple[str, ...]:
    out: list[str] = []
    for r in range(h):
        cell = table.grid[r][c]
        if cell is not None and cell.text and (not out or out[-1] != cell.text):
            out.append(cell.text)
    return tuple(out)


def column_benchmark(table: Table, h: int, c: int) -> tuple[Benchmark, int] | None:
    for i, level in enumerate(header_path(table, h, c)):
        bench, _shots, _name = benchmark_of(level)
        if bench is not None:
            return bench, i
    return None


def model_col(table: Table, h: int, labels: int) -> int:
    """Which label column names the model: one headed "Model"/"System"/"Method", else the first
    whose cells are not parameter counts ("7B"), else the last."""
    for c in range(labels):
        top = table.grid[0][c]
        if h and top is not None and _MODEL_HEADER_RE.search(top.text):
            return c
    for c in range(labels):
        texts = [cell.text for r in range(h, table.n_rows) if (cell := table.grid[r][c]) is not None and cell.text]
        if texts and not all(_SIZE_RE.match(t) for t in texts):
            return c
    return labels - 1


def bench_col(table: Table, h: int, labels: int) -> int:
    """The label column that names benchmarks (transposed tables): the one the registry knows most."""
    counts = [
        sum(1 for r in range(h, table.n_rows) if (cell := table.grid[r][c]) is not None and benchmark_of(cell.text)[0])
        for c in range(labels)
    ]
    return max(range(labels), key=lambda c: (counts[c], -c))


def row_label(table: Table, r: int, labels: int) -> str:
    cell = table.grid[r][bench_col(table, 0, labels) if labels > 1 else 0]
    return cell.text if cell is not None else ""


def row_group(table: Table, r: int, labels: int, model_col: int) -> str | None:
    parts = [
        cell.text for c in range(labels) if c != model_col and (cell := table.grid[r][c]) is not None and cell.text
    ]
    return " / ".join(dict.fromkeys(parts)) or None


def model_labels(table: Table, h: int, labels: int, *, transposed: bool) -> list[str]:
    if transposed:
        cells = [
            next((table.grid[k][c] for k in range(h - 1, -1, -1) if table.grid[k][c] is not None), None)
            for c in range(labels, table.n_cols)
        ]
    else:
        col = model_col(table, h, labels)
        cells = [table.grid[r][col] for r in range(h, table.n_rows)]
    return list(dict.fromkeys(cell.text for cell in cells if cell is not None and cell.text))
