"""How the explorer words and orders what it shows: setups by name, intervals, canonicalisation
steps without empty bounds, the index's family groups and a leaderboard's chart.

Pure functions over the rows of :mod:`evalhouse.site.data`; the templates call them.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from datetime import date
from typing import Any

#: A setup value longer than this is shortened on tables (the whole value is in the title and on
#: the audit page).
SHORT = 48
#: A normal 95% interval from a stated standard error.
Z95 = 1.959963984540054
#: Models named on a leaderboard's chart.
CHART_TOP = 10


def setup_parts(setup: str | None, setup_key: str = "") -> list[dict[str, str]]:
    """The setup as ``[{"key", "value", "short"}]``, sorted by key, each value written out (the
    setup key writes long values as hashes). Falls back to the key's own parts without the JSON."""
    parsed: Any = None
    if setup:
        try:
            parsed = json.loads(setup)
        except ValueError:
            parsed = None
    if isinstance(parsed, dict) and parsed:
        items = [(str(k), v if isinstance(v, str) else json.dumps(v, sort_keys=True)) for k, v in parsed.items()]
    else:
        items = [tuple(part.split("=", 1)) if "=" in part else (part, "") for part in setup_key.split(";") if part]
    return [
        {"key": k, "value": v, "short": v if len(v) <= SHORT else v[: SHORT - 1].rstrip() + "…"}
        for k, v in sorted(items)
    ]


def setup_text(setup: str | None, setup_key: str = "") -> str:
    """``"shots=5; subject=Abstract Algebra"``: the whole setup in one line."""
    return "; ".join(f"{p['key']}={p['value']}" if p["value"] else p["key"] for p in setup_parts(setup, setup_key))


_BOUNDS = re.compile(r"within bounds \[(?P<lo>[^,\]]*), (?P<hi>[^\]]*)\] ?(?P<rest>.*)")


def step_text(step: Any) -> str:
    """A canonicalisation step as a person reads it: bounds the metric does not have are not
    printed ("within bounds [None, None] points; ..." reads "points; ...")."""
    text = str(step)
    m = _BOUNDS.fullmatch(text)
    if not m:
        return text
    lo, hi, rest = (None if m["lo"] == "None" else m["lo"]), (None if m["hi"] == "None" else m["hi"]), m["rest"]
    if lo is not None and hi is not None:
        return text
    if lo is None and hi is None:
        return f"no bounds stated: {rest}" if rest else "no bounds stated"
    bound = f"at least {lo}" if lo is not None else f"at most {hi}"
    return f"{bound} {rest}".rstrip()


def interval(row: dict[str, Any]) -> dict[str, Any] | None:
    """The value's interval where the source gives one: its confidence interval, else a normal 95%
    interval from its standard error (``how`` says which)."""
    lo, hi = row.get("ci_lower"), row.get("ci_upper")
    if lo is not None and hi is not None:
        level = row.get("ci_level")
        return {"lower": lo, "upper": hi, "how": f"{level:.0%} CI stated by the source" if level else "CI stated"}
    se, value = row.get("stderr"), row.get("value")
    if se is not None and value is not None:
        return {
            "lower": value - Z95 * se,
            "upper": value + Z95 * se,
            "how": f"value ± 1.96 × the stated standard error ({se:.4g}): a normal 95% interval",
        }
    return None


def index_rows(models: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The index's rows, from base models in knowledge order (best known first).

    Each model line (a base model and the developer's own variants of it, e.g. its instruct
    release) stays together where its best-known member ranks. A family's derivatives (models of
    the family by developers other than the family's own) follow the family's best-known line,
    folded (``derivative``; the line's first row is the ``fold_head`` with ``n_folded``); a family
    with no release of its own developer is listed as it is. ``fold`` names the family."""
    lines: dict[str, list[dict[str, Any]]] = defaultdict(list)
    derivatives: dict[str, list[dict[str, Any]]] = defaultdict(list)
    has_own = {m["family_id"] for m in models if m["official"]}
    for m in models:
        if m["official"] or m["family_id"] not in has_own:
            lines[m["derived_from"] if m["official"] and m["derived_from"] else m["base_model_id"]].append(m)
        else:
            derivatives[m["family_id"]].append(m)
    rows: list[dict[str, Any]] = []
    placed: set[str] = set()
    for members in lines.values():
        family = members[0]["family_id"]
        folded = derivatives.get(family, []) if family not in placed and members[0]["official"] else []
        if folded:
            placed.add(family)
        for i, m in enumerate(members):
            head = i == 0 and bool(folded)
            rows.append(m | {"derivative": False, "fold": family, "fold_head": head, "n_folded": len(folded)})
        rows.extend(m | {"derivative": True, "fold": family, "fold_head": False, "n_folded": 0} for m in folded)
    return rows


def qualifiers(config_id: str, base_model_id: str) -> str:
    """A configuration by what it adds to its base model ("mode=reasoning|effort=high"), or
    "(plain)" for the configuration named as its base model."""
    if config_id.startswith(base_model_id):
        return config_id[len(base_model_id) :].lstrip("|") or "(plain)"
    return config_id


def search_text(*parts: Any) -> str:
    """Lower-case words for the index's search: ``-``, ``_``, ``/`` and spaces all separate words
    (so "llama 3.1" and "llama-3.1" find the same), dots and digits stay ("3.1")."""
    text = " ".join(str(p) for p in parts if p)
    return " ".join(re.split(r"[\s\-_/|=:,;()]+", text.lower())).strip()


def chart(cells: list[dict[str, Any]], *, width: int = 960, height: int = 300) -> dict[str, Any] | None:
    """A leaderboard's value against release date (an SVG drawn by the template): every model with a
    release date as a dot, the best ``CHART_TOP`` ranked named, the running best as a step line.
    ``None`` when fewer than two cells have a date."""
    dated = [c for c in cells if c.get("release_date") is not None and c.get("value") is not None]
    if len(dated) < 2:
        return None
    pad_l, pad_r, pad_t, pad_b = 64, 250, 14, 34
    days = [_day(c["release_date"]) for c in dated]
    values = [float(c["value"]) for c in dated]
    d0, d1 = min(days), max(days)
    v0, v1 = min(values), max(values)
    if d1 == d0:
        d0, d1 = d0 - 30, d1 + 30
    if v1 == v0:
        v0, v1 = v0 - 1, v1 + 1
    lower_better = bool(dated[0].get("lower_is_better"))

    def x(day: int) -> float:
        return round(pad_l + (day - d0) / (d1 - d0) * (width - pad_l - pad_r), 1)

    def y(value: float) -> float:
        share = (value - v0) / (v1 - v0)
        if lower_better:  # up is better either way
            share = 1 - share
        return round(height - pad_b - share * (height - pad_t - pad_b), 1)

    top = {c["cell_id"] for c in sorted(dated, key=lambda c: c["rank"])[:CHART_TOP]}
    points = [
        {"x": x(d), "y": y(v), "top": c["cell_id"] in top, "label": c["base_model_id"], "value": v, "rank": c["rank"]}
        for c, d, v in zip(dated, days, values, strict=True)
    ]
    frontier, best = [], None
    for d, v in sorted(zip(days, values, strict=True)):
        if best is None or (v < best if lower_better else v > best):
            best = v
            frontier.append((x(d), y(v)))
    steps = []
    for i, (px, py) in enumerate(frontier):
        steps.append(f"{px},{py}")
        nxt = frontier[i + 1][0] if i + 1 < len(frontier) else x(d1)
        steps.append(f"{nxt},{py}")
    years = range(date.fromordinal(d0).year + 1, date.fromordinal(d1).year + 1)
    return {
        "width": width,
        "height": height,
        "points": sorted(points, key=lambda p: p["top"]),  # named ones drawn last, on top
        "labels": _labels([p for p in points if p["top"]], height - pad_b),
        "frontier": " ".join(steps),
        "x_ticks": [{"x": x(date(yr, 1, 1).toordinal()), "label": str(yr)} for yr in years],
        "y_ticks": [{"y": y(v), "value": v} for v in (v0, (v0 + v1) / 2, v1)],
        "left": pad_l,
        "right": width - pad_r,
        "bottom": height - pad_b,
        "top": pad_t,
        "lower_is_better": lower_better,
        "n": len(dated),
    }


def _labels(points: list[dict[str, Any]], bottom: float) -> list[dict[str, Any]]:
    """Names of the top models at the right edge, one line each in value order, each tied to its dot."""
    ordered = sorted(points, key=lambda p: p["y"])
    gap = 13
    y = 12.0
    out = []
    for p in ordered:
        y = max(y, p["y"] - 4) if not out else max(out[-1]["ty"] + gap, min(p["y"], bottom))
        label = f"{p['rank']}. {p['label']}"
        out.append(
            {"x": p["x"], "y": p["y"], "ty": round(y, 1), "label": label if len(label) <= 40 else label[:39] + "…"}
        )
    return out


def _day(value: Any) -> int:
    return value.toordinal() if isinstance(value, date) else date.fromisoformat(str(value)[:10]).toordinal()
