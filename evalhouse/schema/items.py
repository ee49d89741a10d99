"""Item-level parse output: Arrow tables of items, checkpoints, harness runs and responses.

A harness log (lm-evaluation-harness, HELM, Inspect AI, EEE instance files, a panel CSV) holds
one response per item and checkpoint, and a panel holds millions. Parsers therefore hand the
loader whole Arrow tables (:class:`ItemBatch`) rather than one object per row, and the loader
bulk-inserts them. The column sets below are the warehouse columns a parser fills; the loader
adds the provenance columns (source, run, raw sha256).

``field_map`` says where every field of the source went: ``"column"`` names a warehouse column,
``"unmapped"`` means the value is kept verbatim in the row's ``unmapped`` JSON. A parser that
meets a field it has no rule for records it as unmapped instead of dropping it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

AXES = ("PT", "SFT", "RL", "anchor")

#: Response columns every batch carries; the others may be left out (they load as NULL) so a
#: panel of 10⁷ probabilities does not allocate ten columns of nulls.
RESPONSE_REQUIRED = ("item_id", "checkpoint_id", "eval_run_id", "seed", "epoch", "p_correct", "locator", "line")


@cache
def _schemas() -> dict[str, pa.Schema]:
    import pyarrow as pa  # noqa: PLC0415 - Arrow loads with item data, not with every command

    ITEM_SCHEMA = pa.schema(
        [
            ("item_id", pa.string()),
            ("benchmark", pa.string()),
            ("subtask", pa.string()),
            ("split", pa.string()),
            ("source_item_id", pa.string()),
            ("content_sha256", pa.string()),
            ("gold", pa.string()),
            ("gold_index", pa.int32()),
            ("choices", pa.list_(pa.string())),
            ("domain", pa.string()),
            ("dataset_revision", pa.string()),
            ("content", pa.string()),  # JSON text
        ]
    )

    CHECKPOINT_SCHEMA = pa.schema(
        [
            ("checkpoint_id", pa.string()),
            ("suite", pa.string()),
            ("checkpoint", pa.string()),
            ("model", pa.string()),
            ("size_params", pa.int64()),
            ("seed", pa.int32()),
            ("axis", pa.string()),
            ("effort", pa.float64()),
            ("effort_unit", pa.string()),
            ("revision", pa.string()),
        ]
    )

    EVAL_RUN_SCHEMA = pa.schema(
        [
            ("eval_run_id", pa.string()),
            ("harness", pa.string()),
            ("harness_version", pa.string()),
            ("task", pa.string()),
            ("checkpoint_id", pa.string()),
            ("task_config", pa.string()),  # JSON text
            ("prompt_template_sha256", pa.string()),
            ("n_shot", pa.int32()),
            ("evaluated_at", pa.string()),
            ("aggregate", pa.string()),  # JSON text
            ("details", pa.string()),  # JSON text
            ("locator", pa.string()),
        ]
    )

    RESPONSE_SCHEMA = pa.schema(
        [
            ("item_id", pa.string()),
            ("checkpoint_id", pa.string()),
            ("eval_run_id", pa.string()),
            ("seed", pa.int32()),
            ("epoch", pa.int32()),
            ("p_correct", pa.float64()),
            ("acc", pa.float64()),
            ("acc_norm", pa.float64()),
            ("margin", pa.float64()),
            ("score_name", pa.string()),
            ("choice_logprob", pa.list_(pa.float64())),
            ("choice_is_greedy", pa.list_(pa.bool_())),
            ("choice_chars", pa.list_(pa.int32())),
            ("choice_tokens", pa.list_(pa.int32())),
            ("chosen_index", pa.int32()),
            ("output", pa.string()),
            ("scores", pa.string()),  # JSON text
            ("unmapped", pa.string()),  # JSON text
            ("locator", pa.string()),
            ("line", pa.int64()),
        ]
    )
    return {
        "item": ITEM_SCHEMA,
        "checkpoint": CHECKPOINT_SCHEMA,
        "eval_run": EVAL_RUN_SCHEMA,
        "item_response": RESPONSE_SCHEMA,
    }


_SCHEMA_NAMES = {
    "ITEM_SCHEMA": "item",
    "CHECKPOINT_SCHEMA": "checkpoint",
    "EVAL_RUN_SCHEMA": "eval_run",
    "RESPONSE_SCHEMA": "item_response",
}


def __getattr__(name: str) -> Any:
    """``ITEM_SCHEMA``, ``CHECKPOINT_SCHEMA``, ``EVAL_RUN_SCHEMA``, ``RESPONSE_SCHEMA`` and ``SCHEMAS``
    (table name -> Arrow schema), built on first use."""
    if name in _SCHEMA_NAMES:
        return _schemas()[_SCHEMA_NAMES[name]]
    if name == "SCHEMAS":
        return _schemas()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def item_id(benchmark: str, source_item_id: str, *, subtask: str = "", split: str = "") -> str:
    """The stable item id: ``<benchmark>/<subtask>/<split>/<source id>`` (empty parts kept)."""
    return f"{benchmark}/{subtask}/{split}/{source_item_id}"


def checkpoint_id(suite: str, checkpoint: str, seed: int | None = None) -> str:
    """``<suite>/<checkpoint>`` plus ``/seed=<n>`` when the training seed is known."""
    return f"{suite}/{checkpoint}" + ("" if seed is None else f"/seed={seed}")


def content_sha256(content: Any) -> str:
    """sha256 of the canonical JSON of an item's content (sorted keys, no whitespace)."""
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def eval_run_id(*parts: Any) -> str:
    """A short, deterministic id of one harness run from what defines it."""
    text = json.dumps([str(p) for p in parts], separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def jtext(value: Any) -> str | None:
    """JSON text of a value for a JSON column (None stays NULL)."""
    if value is None:
        return None
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str, allow_nan=False)


def table(rows: Iterable[Mapping[str, Any]], schema: pa.Schema) -> pa.Table:
    """An Arrow table of ``rows`` with exactly ``schema``'s columns (missing keys are NULL)."""
    import pyarrow as pa  # noqa: PLC0415 - Arrow loads with item data, not with every command

    names = schema.names
    columns: dict[str, list[Any]] = {n: [] for n in names}
    for row in rows:
        unknown = set(row) - set(names)
        if unknown:
            raise KeyError(f"columns {sorted(unknown)} are not in the {schema.names[0]} table")
        for n in names:
            columns[n].append(row.get(n))
    return pa.table({n: pa.array(columns[n], type=schema.field(n).type) for n in names}, schema=schema)


def conform(data: pa.Table, schema: pa.Schema, *, fill: bool = True) -> pa.Table:
    """``data`` with ``schema``'s columns in order and types cast (dictionary columns of the right
    value type stay dictionary-encoded); missing columns are NULL, or left out with ``fill=False``."""
    import pyarrow as pa  # noqa: PLC0415 - Arrow loads with item data, not with every command

    cols, names = [], []
    for f in schema:
        if f.name in data.column_names:
            col = data.column(f.name)
            keep = col.type == f.type or (pa.types.is_dictionary(col.type) and col.type.value_type == f.type)
            cols.append(col if keep else col.cast(f.type))
        elif fill:
            cols.append(pa.nulls(data.num_rows, type=f.type))
        else:
            continue
        names.append(f.name)
    return pa.Table.from_arrays(cols, names=names)


@dataclass(frozen=True)
class ItemBatch:
    """Items, checkpoints, harness runs and responses parsed from one payload (or part of one)."""

    items: pa.Table
    checkpoints: pa.Table
    eval_runs: pa.Table
    responses: pa.Table
    locator: str
    field_map: dict[str, str] = field(default_factory=dict)
    raw_sha256: str | None = None
    lines_read: int | None = None  # source lines this batch accounts for (responses + refused lines)

    def __post_init__(self) -> None:
        for name, data in (
            ("item", self.items),
            ("checkpoint", self.checkpoints),
            ("eval_run", self.eval_runs),
            ("item_response", self.responses),
        ):
            expected = _schemas()[name].names
            if name == "item_response":
                order = [c for c in expected if c in data.schema.names]
                missing = [c for c in RESPONSE_REQUIRED if c not in data.schema.names]
                if data.schema.names != order or missing:
                    raise ValueError(
                        f"item_response columns {data.schema.names}: need {RESPONSE_REQUIRED}, in {expected}"
                    )
            elif data.schema.names != expected:
                raise ValueError(f"{name} table columns {data.schema.names} != {expected}")

    @property
    def n_responses(self) -> int:
        return self.responses.num_rows
