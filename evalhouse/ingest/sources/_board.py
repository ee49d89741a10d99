"""One leaderboard row -> one EEE record: the assembly every board parser shares.

A :class:`Board` holds what is constant for a source (who publishes it, who ran the numbers,
the harness); :meth:`Board.record` builds and validates one model's record, and
:meth:`Board.result` one score cell, through the same helpers as the Epoch and AA parsers
(:mod:`evalhouse.ingest.sources._common`), so every source lays its records out alike.

Who measured what: ``evaluated_by`` is the board's default (an aggregator that collects
others' numbers says ``aggregator`` and names the original source per row; a board that runs
its own evaluations says ``independent_evaluator`` or ``benchmark_creator``); a row that is the
model developer's own claim overrides it with ``model_developer``, so the conflict policy never
averages a vendor's claim with an independent run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from evalhouse.ingest.source import FetchMeta, SourceSpec
from evalhouse.ingest.sources import _common as common
from evalhouse.schema.records import ORIGINAL_SOURCE, ORIGINAL_SOURCE_URL, ParsedRecord, ParseFailure


@dataclass(frozen=True)
class Model:
    id: str
    name: str
    developer: str | None = None
    details: Mapping[str, str] = field(default_factory=dict)
    deployment_type: str = "unknown"
    availability: str = "unknown"


@dataclass(frozen=True)
class Board:
    spec: SourceSpec
    evaluated_by: str
    eval_library: str
    organisation_url: str | None = None
    source_type: str = "documentation"  # "evaluation_run": the records are a harness's own output

    def result(self, url: str, **cell: Any) -> dict[str, Any]:
        """One score cell: ``dataset_name, metric_id, unit, bounds, score`` (+ optional fields)."""
        metric = cell["metric_id"]
        cell.setdefault("metric_name", metric)
        cell.setdefault("metric_kind", metric.split(".")[0])
        cell.setdefault("lower_is_better", False)
        return common.score_result(source_key=self.spec.key, url=url, **cell)

    def record(
        self,
        meta: FetchMeta,
        model: Model,
        results: list[dict[str, Any]],
        where: tuple[str, str],
        **provenance: str | None,
    ) -> ParsedRecord | ParseFailure:
        """The validated record of ``model``; ``where`` is ``(locator, source row as JSON)``.

        ``provenance`` may set ``evaluated_by``, ``original_source``, ``original_source_url``,
        ``evaluation_timestamp`` and ``eval_library_version`` for this row.
        """
        locator, payload = where
        details = {
            ORIGINAL_SOURCE: provenance.get("original_source") or self.spec.name,
            ORIGINAL_SOURCE_URL: provenance.get("original_source_url") or self.spec.homepage,
        }
        info: dict[str, Any] = {
            "name": model.name,
            "id": model.id,
            "additional_details": {
                "deployment_type": model.deployment_type,
                "model_availability": model.availability,
                **{k: v for k, v in model.details.items() if v is not None},
            },
        }
        if model.developer:
            info["developer"] = model.developer
        built = common.build_record(
            meta=meta,
            source_metadata=common.source_metadata(
                name=self.spec.name,
                organisation=self.spec.organisation,
                organisation_url=self.organisation_url or self.spec.homepage,
                evaluated_by=provenance.get("evaluated_by") or self.evaluated_by,
                details=details,
                source_type=self.source_type,
            ),
            eval_library={"name": self.eval_library, "version": provenance.get("eval_library_version") or "unknown"},
            model_info=info,
            results=results,
            locator=locator,
            payload=payload,
        )
        stamp = provenance.get("evaluation_timestamp")
        if stamp and isinstance(built, ParsedRecord):
            built.record["evaluation_timestamp"] = stamp
            return replace(built, valid=False)  # changed after its check: the loader checks it again
        return built


def org_of(model_id: str) -> str | None:
    """The namespace of an ``org/model`` id, else None."""
    return model_id.split("/", 1)[0] if "/" in model_id else None
