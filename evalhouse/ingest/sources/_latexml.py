"""LaTeXML / ar5iv HTML tables as grids of cells, with spans resolved and typography kept.

arXiv's HTML papers (and ar5iv's renderings of older ones) are LaTeXML output: a table is a
``figure.ltx_table`` holding a ``figcaption`` (``span.ltx_tag_table`` = "Table 2:") and one or
more ``table.ltx_tabular`` with ``tr.ltx_tr`` rows of ``td.ltx_td`` / ``th.ltx_th`` cells, where
``ltx_th_column`` marks column headers and ``ltx_th_row`` row headers. ``rowspan``/``colspan``
are expanded here, so every grid position points at the cell that covers it, and a cell's text
is read with its math (``<math alttext="\\pm">``) as plain symbols, footnote bodies left out and
bold, underline and footnote marks kept beside the text rather than in it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from bs4 import BeautifulSoup, NavigableString, Tag

#: TeX commands LaTeXML leaves in ``alttext`` that matter inside a result cell.
_TEX = {
    r"\pm": "±",
    r"\mp": "∓",
    r"\dagger": "†",
    r"\ddagger": "‡",
    r"\star": "⋆",
    r"\ast": "*",
    r"\times": "×",
    r"\uparrow": "↑",
    r"\downarrow": "↓",
    r"\%": "%",
    r"\sigma": "σ",
    r"\theta": "θ",
    r"\tau": "τ",
    r"\rho": "ρ",
}
_TEX_RE = re.compile("|".join(re.escape(k) for k in sorted(_TEX, key=len, reverse=True)))
MARKER_CHARS = "*†‡§¶∗⋆♠♣♢♡♯"
_TRAILING_MARKS = re.compile(rf"[\s{re.escape(MARKER_CHARS)}]*[{re.escape(MARKER_CHARS)}]\s*$")


@dataclass(frozen=True)
class Cell:
    text: str  # normalised text without footnote marks
    header: bool  # a column header (th_column, thead) - row headers are body cells with `row_header`
    row: int
    col: int
    rowspan: int = 1
    colspan: int = 1
    row_header: bool = False
    bold: bool = False
    underline: bool = False
    italic: bool = False
    markers: tuple[str, ...] = ()
    raw: str = ""
    in_head: bool = False  # inside ``thead`` (LaTeXML's own guess; the header is found by content)


@dataclass(frozen=True)
class Table:
    number: str  # "2", "A3"; "?" when the table has no tag
    ordinal: int  # 1-based position among the document's tables
    caption: str
    element_id: str | None
    grid: list[list[Cell | None]] = field(default_factory=list)

    @property
    def n_rows(self) -> int:
        return len(self.grid)

    @property
    def n_cols(self) -> int:
        return max((len(r) for r in self.grid), default=0)


def soup_of(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html.parser")


def _norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).replace("\u00a0", " ").split())


def _math_text(node: Tag) -> str:
    alt = node.get("alttext")
    if isinstance(alt, str) and alt.strip():
        text = _TEX_RE.sub(lambda m: _TEX[m.group(0)], alt)
        text = re.sub(r"\\[a-zA-Z]+\s*", "", text)  # \mathrm, \hat, \text: the argument is what shows
        return re.sub(r"[{}^_\\$]", "", text)
    return node.get_text("")


def node_text(node: Tag) -> tuple[str, list[str]]:
    """The visible text of ``node`` (math as symbols, footnote bodies out) and its footnote marks."""
    parts: list[str] = []
    marks: list[str] = []

    def walk(el: Tag | NavigableString) -> None:
        if isinstance(el, NavigableString):
            parts.append(str(el))
            return
        classes = set(el.get("class") or [])
        if el.name == "math":
            parts.append(_math_text(el))
            return
        if "ltx_note_outer" in classes or "ltx_note_content" in classes or el.name in ("script", "style"):
            return
        if "ltx_tabular" in classes and el is not node:  # a cell that stacks its text in an inner tabular
            lines = [_norm(node_text(tr)[0]) for tr in el.find_all(class_="ltx_tr") if _closest_tabular(tr) is el]
            parts.append(" " + join_lines([line for line in lines if line]) + " ")
            return
        if "ltx_note_mark" in classes or el.name == "sup" or "ltx_sup" in classes:
            mark = _norm(el.get_text(""))
            if mark:
                marks.append(mark)
            return
        for child in el.children:
            walk(child)

    walk(node)
    text = _norm("".join(parts))
    trailing = _TRAILING_MARKS.search(text)
    if trailing:
        marks.extend(ch for ch in trailing.group(0) if ch in MARKER_CHARS)
        text = text[: trailing.start()].rstrip()
    return text, marks


def join_lines(lines: list[str]) -> str:
    """Lines a label was broken into, joined: a line ending or starting with a hyphen continues the
    word ("OpenAI-o1" + "-preview", "Claude-3.5-" + "Sonnet-1022"), anything else takes a space."""
    out = ""
    for line in lines:
        if not out:
            out = line
        elif out.endswith("-") or line.startswith("-"):
            out += line
        else:
            out += " " + line
    return out


def _closest_tabular(node: Tag) -> Tag | None:
    return node.find_parent(class_="ltx_tabular")


def _has_class(node: Tag, *names: str) -> bool:
    if set(node.get("class") or []) & set(names):
        return True
    return any(set(t.get("class") or []) & set(names) for t in node.find_all(True))


def _styled(node: Tag) -> tuple[bool, bool, bool]:
    bold = node.name in ("b", "strong") or bool(node.find(["b", "strong"])) or _has_class(node, "ltx_font_bold")
    under = (
        bool(node.find("u"))
        or _has_class(node, "ltx_framed_underline", "ltx_font_underline", "ltx_ulem_uline")
        or "underline" in str(node.get("style") or "")
    )
    italic = bool(node.find(["i", "em"])) or _has_class(node, "ltx_font_italic")
    return bold, under, italic


def _span(node: Tag, attr: str) -> int:
    try:
        return max(1, int(str(node.get(attr, "1")).strip() or "1"))
    except ValueError:
        return 1


def _rows(tabular: Tag) -> list[Tag]:
    return [tr for tr in tabular.find_all("tr") if tr.find_parent("table") is tabular]


def grid_of(tabular: Tag) -> list[list[Cell | None]]:
    """The tabular as a grid: spans expanded, each position pointing at its covering cell."""
    grid: list[list[Cell | None]] = []
    for r, tr in enumerate(_rows(tabular)):
        while len(grid) <= r:
            grid.append([])
        in_head = tr.find_parent("thead") is not None
        c = 0
        for td in tr.find_all(["td", "th"], recursive=False):
            while c < len(grid[r]) and grid[r][c] is not None:
                c += 1
            classes = set(td.get("class") or [])
            text, marks = node_text(td)
            bold, under, italic = _styled(td)
            cell = Cell(
                text=text,
                header=in_head or "ltx_th_column" in classes or (td.name == "th" and "ltx_th_row" not in classes),
                row=r,
                col=c,
                rowspan=_span(td, "rowspan"),
                colspan=_span(td, "colspan"),
                row_header="ltx_th_row" in classes,
                bold=bold,
                underline=under,
                italic=italic,
                markers=tuple(marks),
                raw=_norm(td.get_text(" ")),
                in_head=in_head,
            )
            for dr in range(cell.rowspan):
                while len(grid) <= r + dr:
                    grid.append([])
                row = grid[r + dr]
                while len(row) < c + cell.colspan:
                    row.append(None)
                for dc in range(cell.colspan):
                    row[c + dc] = cell
            c += cell.colspan
    width = max((len(r) for r in grid), default=0)
    for row in grid:
        row.extend([None] * (width - len(row)))
    return grid


def _caption(figure: Tag) -> tuple[str, str]:
    cap = figure.find("figcaption")
    if cap is None:
        return "?", ""
    tag = cap.find(class_="ltx_tag_table") or cap.find(class_="ltx_tag")
    number = "?"
    if tag is not None:
        match = re.search(r"([A-Z]?\d+(?:\.\d+)?)", tag.get_text(" "))
        number = match[1] if match else "?"
        tag.extract()
    text, _marks = node_text(cap)
    return number, text


def tables(soup: BeautifulSoup) -> list[Table]:
    """Every result-table candidate in document order; a figure with several tabulars gives
    one table each (``2a``, ``2b``)."""
    found: list[Table] = []
    seen: set[int] = set()
    for figure in soup.select("figure.ltx_table"):
        number, caption = _caption(figure)
        tabulars = [t for t in figure.select("table.ltx_tabular") if t.find_parent("table") is None]
        for k, tabular in enumerate(tabulars):
            seen.add(id(tabular))
            suffix = "" if len(tabulars) == 1 else "abcdefghijklmnopqrstuvwxyz"[k % 26]
            found.append(
                Table(
                    f"{number}{suffix}",
                    len(found) + 1,
                    caption,
                    tabular.get("id") or figure.get("id"),
                    grid_of(tabular),
                )
            )
    for tabular in soup.select("table.ltx_tabular"):
        if id(tabular) in seen or tabular.find_parent("table") is not None:
            continue
        found.append(Table("?", len(found) + 1, "", tabular.get("id"), grid_of(tabular)))
    return found
