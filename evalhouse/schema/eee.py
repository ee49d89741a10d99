"""Pydantic v2 models of the Every Eval Ever (EEE) v0.3.0 records.

The JSON Schemas in ``../shared/formats/eee/`` are the reference; tests validate every JSON these
models produce against them. Where the schema is open (``additional_details``, unknown keys in
nested objects) the models keep unknown keys (``extra="allow"``) so a record round-trips; where
it is closed (the top level, ``generation_args``) they forbid them.

Two rules the JSON Schema states only in prose are enforced here too: a ``continuous`` metric
needs both bounds and a ``levels`` metric its level names; bounds are numbers or the strings
``"Infinity"``/``"-Infinity"`` and never NaN. A record of another schema version is refused
with a message naming the version, because EEE 0.2.0 files (no ``eval_library``, no deployment
axes) otherwise fail with a dozen unrelated-looking field errors. Scores and their uncertainty
are typed strictly, as the JSON Schema types them: ``"score": "0.5"`` or ``true`` is refused, never
read as 0.5 or 1.0 (what EEE's own validator would then reject on export).
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, field_validator, model_validator

from evalhouse.errors import InputError
from evalhouse.schema.records import SCHEMA_VERSION

SourceType = Literal["documentation", "evaluation_run"]
EvaluatorRelationship = Literal["first_party", "third_party", "collaborative", "other"]
DeploymentType = Literal["self_deployed", "externally_managed", "unknown"]
ModelAvailability = Literal["open_weights", "closed_weights", "unknown"]
ScoreType = Literal["binary", "continuous", "levels"]
AggregationMethod = Literal["majority_vote", "average", "weighted_average", "median"]
InteractionType = Literal["single_turn", "multi_turn", "agentic"]
Bound = float | Literal["Infinity", "-Infinity"] | None

StrMap = dict[str, str]


class SchemaVersionError(InputError):
    """A record declares a schema version evalhouse does not read."""


class _Open(BaseModel):
    """Nested objects of the schema allow unknown keys; keep them so records round-trip."""

    model_config = ConfigDict(extra="allow", allow_inf_nan=False, defer_build=True)


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, defer_build=True)


class SourceMetadata(_Open):
    source_name: str | None = None
    source_type: SourceType
    source_organization_name: str
    source_organization_url: str | None = None
    source_organization_logo_url: str | None = None
    evaluator_relationship: EvaluatorRelationship
    additional_details: StrMap | None = None


class EvalLibrary(_Open):
    name: str
    version: str
    additional_details: StrMap | None = None


class ModelDetails(_Open):
    """``model_info.additional_details``: two required axes, every other value a string."""

    deployment_type: DeploymentType
    model_availability: ModelAvailability

    @model_validator(mode="after")
    def _extra_values_are_strings(self) -> ModelDetails:
        for key, value in (self.model_extra or {}).items():
            if not isinstance(value, str):
                raise ValueError(f"additional_details.{key} must be a string, got {value!r}")
        return self


class InferenceEngine(_Open):
    name: str | None = None
    version: str | None = None


class ModelInfo(_Open):
    name: str
    id: str
    developer: str | None = None
    inference_platform: str | None = None
    inference_engine: InferenceEngine | None = None
    additional_details: ModelDetails


class SourceDataUrl(_Open):
    dataset_name: str
    source_type: Literal["url"]
    url: Annotated[list[str], Field(min_length=1)]
    additional_details: StrMap | None = None


class SourceDataHf(_Open):
    dataset_name: str
    source_type: Literal["hf_dataset"]
    hf_repo: str | None = None
    hf_split: str | None = None
    samples_number: int | None = None
    sample_ids: list[str] | None = None
    additional_details: StrMap | None = None


class SourceDataPrivate(_Open):
    dataset_name: str
    source_type: Literal["other"]
    additional_details: StrMap | None = None


SourceData = Annotated[SourceDataUrl | SourceDataHf | SourceDataPrivate, Field(discriminator="source_type")]


class JudgeConfig(_Open):
    model_info: ModelInfo
    temperature: float | None = None
    weight: float | None = None
    additional_details: StrMap | None = None


class LlmScoring(_Open):
    judges: Annotated[list[JudgeConfig], Field(min_length=1)]
    input_prompt: str
    aggregation_method: AggregationMethod | None = None
    expert_baseline: float | None = None
    additional_details: StrMap | None = None


class MetricConfig(_Open):
    evaluation_description: str | None = None
    metric_id: str | None = None
    metric_name: str | None = None
    metric_kind: str | None = None
    metric_unit: str | None = None
    metric_parameters: dict[str, str | float | bool | None] | None = None
    lower_is_better: bool
    score_type: ScoreType | None = None
    level_names: list[str] | None = None
    level_metadata: list[str] | None = None
    has_unknown_level: bool | None = None
    min_score: Bound = None
    max_score: Bound = None
    llm_scoring: LlmScoring | None = None
    additional_details: StrMap | None = None

    @field_validator("min_score", "max_score", mode="before")
    @classmethod
    def _bound(cls, value: Any) -> Any:
        # JSON has no literal for infinity: EEE spells unbounded as the strings. A float
        # infinity coming from Python is turned into that spelling; NaN is never a bound.
        if isinstance(value, float):
            if math.isnan(value):
                raise ValueError("a metric bound cannot be NaN")
            if math.isinf(value):
                return "Infinity" if value > 0 else "-Infinity"
        return value

    @model_validator(mode="after")
    def _conditional_requirements(self) -> MetricConfig:
        # null means "not provided" in EEE, which a continuous metric may not leave its bounds.
        if self.score_type == "continuous" and (self.min_score is None or self.max_score is None):
            raise ValueError("a continuous metric needs both min_score and max_score")
        if self.score_type == "levels" and (self.level_names is None or self.has_unknown_level is None):
            raise ValueError("a levels metric needs level_names and has_unknown_level")
        return self


class StandardError(_Open):
    value: StrictFloat
    method: str | None = None


class ConfidenceInterval(_Open):
    lower: StrictFloat
    upper: StrictFloat
    confidence_level: Annotated[float, Field(ge=0, le=1)] | None = None
    method: str | None = None


class Uncertainty(_Open):
    standard_error: StandardError | None = None
    confidence_interval: ConfidenceInterval | None = None
    standard_deviation: StrictFloat | None = None
    num_samples: StrictInt | None = None
    num_bootstrap_samples: StrictInt | None = None


class ScoreDetails(_Open):
    score: StrictFloat  # a JSON number: never a numeric string or a boolean (EEE's schema says number)
    details: StrMap | None = None
    uncertainty: Uncertainty | None = None


class AgenticEvalConfig(_Open):
    available_tools: list[dict[str, Any]] | None = None
    additional_details: StrMap | None = None


class GenerationArgs(_Closed):
    temperature: float | None = None
    top_p: float | None = None
    top_k: float | None = None
    max_tokens: Annotated[int, Field(ge=1)] | None = None
    execution_command: str | None = None
    reasoning: bool | None = None
    prompt_template: str | None = None
    agentic_eval_config: AgenticEvalConfig | None = None
    eval_plan: dict[str, Any] | None = None
    eval_limits: dict[str, int] | None = None
    sandbox: dict[str, str] | None = None
    max_attempts: int | None = None
    incorrect_attempt_feedback: str | None = None


class GenerationConfig(_Open):
    generation_args: GenerationArgs | None = None
    additional_details: StrMap | None = None


class EvaluationResult(_Open):
    evaluation_result_id: str | None = None
    evaluation_name: str
    source_data: SourceData
    evaluation_timestamp: str | None = None
    metric_config: MetricConfig
    score_details: ScoreDetails
    generation_config: GenerationConfig | None = None


class DetailedEvaluationResults(_Open):
    format: Literal["jsonl"]
    file_path: Annotated[
        str,
        Field(
            pattern=r"^data/[^/]+/[^/]+/[^/]+/[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-4[0-9A-Fa-f]{3}"
            r"-[89ABab][0-9A-Fa-f]{3}-[0-9A-Fa-f]{12}_samples\.jsonl$"
        ),
    ]
    hash_algorithm: Literal["sha256", "md5"] | None = None
    checksum: str | None = None
    total_rows: int | None = None
    additional_details: StrMap | None = None


def _require_version(data: Any) -> Any:
    if isinstance(data, dict):
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise SchemaVersionError(
                f"schema_version {version!r} is not supported: evalhouse reads Every Eval Ever "
                f"{SCHEMA_VERSION} records (convert older records with the EEE tools first)"
            )
    return data


class EvaluationLog(_Closed):
    """One EEE aggregate record (``<uuid>.json``)."""

    schema_version: Literal["0.3.0"]
    evaluation_id: str
    evaluation_timestamp: str | None = None
    retrieved_timestamp: str
    source_metadata: SourceMetadata
    eval_library: EvalLibrary
    model_info: ModelInfo
    evaluation_results: list[EvaluationResult]
    detailed_evaluation_results: DetailedEvaluationResults | None = None

    _version = model_validator(mode="before")(_require_version)

    def to_json_dict(self) -> dict[str, Any]:
        """The record as EEE JSON: no ``None`` values, infinities as strings."""
        return self.model_dump(mode="json", exclude_none=True)


class InstanceInput(_Open):
    raw: str
    formatted: str | None = None
    reference: list[str]
    choices: list[str] | None = None


class InstanceOutput(_Open):
    raw: list[str]
    reasoning_trace: list[str] | None = None


class ToolCall(_Open):
    id: str
    name: str
    arguments: StrMap | None = None


class Message(_Open):
    turn_idx: Annotated[int, Field(ge=0)]
    role: str
    content: str | None = None
    reasoning_trace: str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: list[str] | None = None


class AnswerAttribution(_Open):
    turn_idx: Annotated[int, Field(ge=0)]
    source: str
    extracted_value: str
    extraction_method: str
    is_terminal: bool


class InstanceEvaluation(_Open):
    score: StrictFloat
    is_correct: bool
    num_turns: Annotated[int, Field(ge=1)] | None = None
    tool_calls_count: Annotated[int, Field(ge=0)] | None = None


class TokenUsage(_Open):
    input_tokens: Annotated[int, Field(ge=0)]
    output_tokens: Annotated[int, Field(ge=0)]
    total_tokens: Annotated[int, Field(ge=0)]
    input_tokens_cache_write: Annotated[int, Field(ge=0)] | None = None
    input_tokens_cache_read: Annotated[int, Field(ge=0)] | None = None
    reasoning_tokens: Annotated[int, Field(ge=0)] | None = None


class Performance(_Open):
    latency_ms: Annotated[float, Field(ge=0)] | None = None
    time_to_first_token_ms: Annotated[float, Field(ge=0)] | None = None
    generation_time_ms: Annotated[float, Field(ge=0)] | None = None
    additional_details: StrMap | None = None


class InstanceRecord(_Closed):
    """One line of an EEE ``<uuid>_samples.jsonl`` file."""

    schema_version: Literal["0.3.0"]
    evaluation_id: str
    model_id: str
    evaluation_name: str
    evaluation_result_id: str | None = None
    sample_id: str
    sample_hash: str | None = None
    interaction_type: InteractionType
    input: InstanceInput
    output: InstanceOutput | None = None
    messages: list[Message] | None = None
    answer_attribution: list[AnswerAttribution]
    evaluation: InstanceEvaluation
    token_usage: TokenUsage | None = None
    performance: Performance | None = None
    error: str | None = None
    metadata: StrMap | None = None

    _version = model_validator(mode="before")(_require_version)

    @model_validator(mode="after")
    def _interaction_shape(self) -> InstanceRecord:
        if self.interaction_type == "single_turn":
            if self.output is None or self.messages is not None:
                raise ValueError("a single_turn instance needs output and no messages")
        elif self.messages is None or self.output is not None:
            raise ValueError(f"a {self.interaction_type} instance needs messages and no output")
        return self

    def to_json_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)
