"""What parsers hand to the loader: EEE records with a locator, or failures with a reason.

A parser is a pure function of the payload bytes. It never drops a row it cannot read: it yields
a :class:`ParseFailure` that the loader puts in ``quarantine`` with the payload's sha256, so the
operator sees exactly which row, column or JSON path was refused and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evalhouse.schema.items import ItemBatch

#: The Every Eval Ever version of the records evalhouse builds and reads (the models, :mod:`.eee`,
#: hold records to it; kept here so a parser names it without importing them).
SCHEMA_VERSION = "0.3.0"

#: ``source_metadata.additional_details`` keys evalhouse reads back from a record. EEE allows any
#: string there, so facts that EEE has no field for travel inside the record and survive export.
EVALUATED_BY = "evalhouse.evaluated_by"
ORIGINAL_SOURCE = "evalhouse.original_source"
ORIGINAL_SOURCE_URL = "evalhouse.original_source_url"

#: ``score_details.details`` key for the source's own id of a row (e.g. Epoch's Airtable id): two
#: rows that differ only in it are different source rows, not a correction of one another.
SOURCE_RECORD_ID = "source_record_id"

#: ``source_data.additional_details`` key by which a source that publishes its own benchmark list
#: (LiveBench's categories files, HELM's group headers) declares the result's benchmark: the value
#: is what the source says of it. A benchmark the registry does not know is then registered from
#: it, as a new benchmark with a recorded decision, instead of quarantined (never merged on a guess).
DECLARED_BENCHMARK = "evalhouse.declared_benchmark"

#: ``model_info.additional_details`` keys with model facts (all strings, as EEE requires).
RELEASE_DATE = "release_date"
RELEASE_DATE_PRECISION = "evalhouse.release_date_precision"
RELEASE_DATE_KIND = "evalhouse.release_date_kind"

EvaluatedBy = str  # model_developer | benchmark_creator | independent_evaluator | aggregator | community | unknown
EVALUATED_BY_VALUES = (
    "model_developer",
    "benchmark_creator",
    "independent_evaluator",
    "aggregator",
    "community",
    "unknown",
)


@dataclass(frozen=True)
class ParsedRecord:
    """One EEE aggregate record (a JSON dict) and where in the payload it came from.

    ``record["evaluation_id"]`` may be empty: the loader then derives it from the fingerprint, so
    identity never carries the fetch time.
    """

    record: dict[str, Any]
    locator: str
    samples: list[dict[str, Any]] | None = None
    samples_locator: str | None = None
    samples_sha256: str | None = None
    datastore_path: str | None = None  # set when the record came from an EEE datastore tree
    raw_sha256: str | None = None  # when one run reads several payloads: this record's own bytes
    # read from JSON text (strictly): it holds no NaN or infinity, so a null in it is a null
    json_text: bool = False
    record_json: bytes | None = None  # orjson's compact bytes of ``record`` when the reader wrote them
    # ``record``'s fingerprint, and its results' JSON when written on the way, computed once when
    # something before the load needed it (a refresh's unchanged check); None: the loader computes it
    fingerprint: str | None = None
    results_json: list[bytes] | None = None
    # the parser validated ``record`` as EEE already (``build_record``: the fast check, or the
    # models' own dump), so the loader does not check it a second time
    valid: bool = False
    # results refused before the load, by index, with the reason (a declared unit its values
    # disagree with, judged over the whole payload: evalhouse.curation.plausibility.judge_units)
    refused_results: dict[int, str] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class ParseFailure:
    """A row or document the parser could not turn into a record."""

    locator: str
    reason: str
    payload: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    raw_sha256: str | None = None


ParseItem = ParsedRecord | ParseFailure | ItemBatch
"""What a parser yields: EEE aggregate records, refused rows, or item-level batches (harness logs)."""
