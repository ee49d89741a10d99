"""What the harness-log parsers share: per-choice statistics, JSONL reading, batch assembly.

Per-choice statistics follow lm-evaluation-harness's ``multiple_choice`` definitions exactly, so a
recomputation from the stored log-likelihoods reproduces the harness's own numbers:

* ``acc``      = 1 if argmax_j ll_j is a gold choice, else 0;
* ``acc_norm`` = the same on ll_j / len(choice_j) (characters of the choice text, without the
  target delimiter);
* ``p_correct`` = the softmax probability of the gold choice among the choices;
* ``margin``   = gold minus best other log-likelihood per character (paper 003's m_i).
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from evalhouse.common.yamls import load_yaml
from evalhouse.ingest import budgets
from evalhouse.ingest.fetch import FetchRequest
from evalhouse.ingest.source import ParseError, SourceState
from evalhouse.schema import items as S
from evalhouse.schema.records import ParseFailure

HARNESS_LOG = "harness_log"


def files_only(state: SourceState) -> list[FetchRequest]:
    """The ``plan`` of a harness-log source: it is ingested from files, so a refresh fetches nothing."""
    return []


@dataclass(frozen=True)
class ChoiceStats:
    p_correct: float | None
    acc: float | None
    acc_norm: float | None
    margin: float | None
    chosen_index: int | None


def choice_stats(lls: list[float], chars: list[int] | None, gold: int | list[int] | None) -> ChoiceStats:
    """acc, acc_norm, p(gold) and the per-character margin from per-choice log-likelihoods."""
    if not lls:
        return ChoiceStats(None, None, None, None, None)
    golds = [gold] if isinstance(gold, int) else list(gold or [])
    chosen = max(range(len(lls)), key=lambda j: lls[j])  # first maximum, as numpy.argmax
    if not golds or any(g < 0 or g >= len(lls) for g in golds):
        return ChoiceStats(None, None, None, None, chosen)
    top = max(lls)
    z = sum(math.exp(x - top) for x in lls)
    p = sum(math.exp(lls[g] - top) for g in golds) / z
    acc = 1.0 if chosen in golds else 0.0
    acc_norm = margin = None
    if chars and len(chars) == len(lls) and all(c > 0 for c in chars):
        norm = [ll / c for ll, c in zip(lls, chars, strict=True)]
        acc_norm = 1.0 if max(range(len(norm)), key=lambda j: norm[j]) in golds else 0.0
        others = [norm[j] for j in range(len(norm)) if j not in golds]
        margin = max(norm[g] for g in golds) - max(others) if others else None
    return ChoiceStats(p, acc, acc_norm, margin, chosen)


def json_doc(body: bytes, what: str) -> Any:
    try:
        return json.loads(body.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ParseError(f"{what} is not JSON: {exc}") from exc


def jsonl(body: bytes, name: str) -> Iterator[tuple[int, dict[str, Any] | ParseFailure]]:
    """``(line number, object)`` per non-blank line, or a ParseFailure naming file and line; a
    line over the line budget is refused unread, a file over the samples budgets whole
    (:mod:`evalhouse.ingest.budgets`: a :class:`~evalhouse.ingest.source.ParseError`)."""
    for n, raw in budgets.lines(body, name):
        if isinstance(raw, budgets.LongLine):
            yield n, ParseFailure(f"{name}:{n}", raw.reason, raw.head)
            continue
        try:
            obj = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            yield n, ParseFailure(f"{name}:{n}", f"not a JSON line: {exc}", raw[:2000].decode("utf-8", "replace"))
            continue
        if not isinstance(obj, dict):
            yield (
                n,
                ParseFailure(f"{name}:{n}", f"expected a JSON object, got {type(obj).__name__}", raw[:2000].decode()),
            )
            continue
        yield n, obj


def as_float(value: Any) -> float | None:
    """A finite number from a number, a numeric string or a bool; else None."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int) and abs(value) > sys.float_info.max:  # 10^400: float() would overflow
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            out = float(value)
        except ValueError:
            return None
        return out if math.isfinite(out) else None
    return None


def as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value in ("True", "False", "true", "false"):
        return value in ("True", "true")
    return None


@cache
def _domains() -> list[tuple[re.Pattern[str], str]]:
    text = resources.files("evalhouse.ingest.sources").joinpath("item_domains.yaml").read_text("utf-8")
    data = load_yaml(text)
    return [(re.compile(rule["pattern"], re.IGNORECASE), rule["domain"]) for rule in data["rules"]]


def domain_of(benchmark: str, subtask: str = "") -> str | None:
    """The domain label (math, general_knowledge, …) the declared rules give a benchmark/subtask."""
    key = f"{benchmark}/{subtask}"
    for pattern, domain in _domains():
        if pattern.search(key):
            return domain
    return None


def checkpoint_key(row: Mapping[str, Any]) -> str:
    """The checkpoint id of a checkpoint row (its suite, checkpoint and seed)."""
    return S.checkpoint_id(row["suite"], row["checkpoint"], row.get("seed"))


@dataclass
class BatchBuilder:
    """Rows of one payload's four tables, plus where every source field went."""

    locator: str
    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    checkpoints: dict[str, dict[str, Any]] = field(default_factory=dict)
    eval_runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    responses: list[dict[str, Any]] = field(default_factory=list)
    field_map: dict[str, str] = field(default_factory=dict)

    def fields(self, mapping: Mapping[str, str]) -> None:
        self.field_map.update(mapping)

    def unmapped(self, prefix: str, obj: Mapping[str, Any], known: Iterable[str]) -> dict[str, Any] | None:
        """The fields of ``obj`` not in ``known``, recorded in the field map as unmapped."""
        known = set(known)
        rest = {k: v for k, v in obj.items() if k not in known}
        for k in rest:
            self.field_map.setdefault(f"{prefix}.{k}", "unmapped")
        return rest or None

    def item(self, row: dict[str, Any]) -> str:
        row = {**row, "subtask": row.get("subtask") or "", "split": row.get("split") or ""}
        row = {
            **row,
            "item_id": row.get("item_id")
            or S.item_id(
                row["benchmark"], row["source_item_id"], subtask=row.get("subtask") or "", split=row.get("split") or ""
            ),
        }
        row.setdefault("domain", domain_of(row["benchmark"], row.get("subtask") or ""))
        self.items.setdefault(row["item_id"], row)
        return row["item_id"]

    def checkpoint(self, row: dict[str, Any]) -> str:
        cid = checkpoint_key(row)
        self.checkpoints.setdefault(cid, {**row, "checkpoint_id": cid})
        return cid

    def eval_run(self, row: dict[str, Any]) -> str:
        self.eval_runs.setdefault(row["eval_run_id"], row)
        return row["eval_run_id"]

    def build(self, lines_read: int | None = None) -> S.ItemBatch:
        return S.ItemBatch(
            items=S.table(self.items.values(), S.ITEM_SCHEMA),
            checkpoints=S.table(self.checkpoints.values(), S.CHECKPOINT_SCHEMA),
            eval_runs=S.table(self.eval_runs.values(), S.EVAL_RUN_SCHEMA),
            responses=S.table(self.responses, S.RESPONSE_SCHEMA),
            locator=self.locator,
            field_map=dict(sorted(self.field_map.items())),
            lines_read=lines_read,
        )
