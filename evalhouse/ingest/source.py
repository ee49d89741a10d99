"""The source contract: a frozen spec plus two pure functions per source module.

Every module in ``evalhouse/ingest/sources/`` exports

* ``SOURCE: SourceSpec`` — what the source is (key, kind, tier, organisation, URLs, cadence,
  required environment variables, parser version);
* ``plan(state: SourceState) -> list[FetchRequest]`` — which URLs to fetch now, given what the
  warehouse remembers (ETag, last payload) and the environment; no I/O;
* ``parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParsedRecord | ParseFailure]`` — records
  from the bytes alone: no network, no clock, no globals.

The runner (``evalhouse.pipeline.refresh``) does all I/O around them, so a parser is tested by
calling it on recorded bytes, and a parser fix is applied with ``evalhouse reparse``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol

from evalhouse.errors import EvalhouseError, InputError
from evalhouse.ingest.fetch import FetchRequest
from evalhouse.schema.records import ParseItem

SourceKind = Literal[
    "leaderboard", "api", "paper", "model_card", "harness_log", "eee_datastore", "aggregator_export", "simulation"
]
Cadence = Literal["hourly", "daily", "weekly", "monthly", "manual"]
KEY_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


class SourceSpecError(EvalhouseError, ValueError):
    """A catalog entry breaks the source contract (checked at import)."""


@dataclass(frozen=True)
class Recording:
    """The real payload a source's parser was verified on: upstream bytes recorded byte for byte.

    ``files`` are the recorded files, as ``fixtures:<path>`` (under the repository's
    ``tests/fixtures/``, each folder with a ``SOURCE.md``) or ``shared:<path>`` (under the pinned
    datasets folder ``../shared``). ``replay`` pairs a live URL the source fetches with the recorded
    file served for it in a replay mirror (``evalhouse mirror from-shared``); a payload read by a
    POST is replayed as ``(live URL, recorded file, body)``, the body the JSON text posted (the
    mirror names the file by URL and body, :mod:`evalhouse.ingest.mirror`). A source whose live
    payload is assembled from its recorded files (Epoch's zip of CSVs) leaves it empty and the
    mirror builds it (:mod:`evalhouse.ingest.pinned`).
    """

    repository: str  # where the bytes were recorded from (a public repository, or the publisher)
    commit: str  # the commit (or capture) that holds them
    recorded: str  # ISO date the bytes were published or captured
    licence: str
    files: tuple[str, ...]
    replay: tuple[tuple[str, str] | tuple[str, str, str], ...] = ()  # (live URL, recorded file[, POST body])

    def __post_init__(self) -> None:
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", self.recorded):
            raise SourceSpecError(f"recording date {self.recorded!r} is not an ISO date (YYYY-MM-DD)")
        for entry in self.replay:
            if len(entry) not in (2, 3) or not all(isinstance(part, str) for part in entry):
                raise SourceSpecError(f"replay entry {entry!r} must be (live URL, recorded file[, POST body])")
        for path in (*self.files, *(entry[1] for entry in self.replay)):
            root, _, rest = path.partition(":")
            if root not in RECORDING_ROOTS or not rest or rest.startswith("/") or ".." in rest.split("/"):
                raise SourceSpecError(f"recorded file {path!r} must be 'fixtures:<path>' or 'shared:<path>'")
        for url, *_ in self.replay:
            if not url.startswith("https://"):
                raise SourceSpecError(f"replayed URL {url!r} is not https")
        if not self.files:
            raise SourceSpecError("a recording names at least one recorded file")

    def as_dict(self) -> dict[str, object]:
        return {
            "repository": self.repository,
            "commit": self.commit,
            "recorded": self.recorded,
            "licence": self.licence,
            "files": list(self.files),
            "replay": {replay_name(entry): entry[1] for entry in self.replay},
        }


def replay_name(entry: tuple[str, ...]) -> str:
    """How a replayed request is shown: its URL, or ``POST <url> <body>``."""
    return entry[0] if len(entry) == 2 else f"POST {entry[0]} {entry[2]}"


#: Where recorded files live: the repository's tests/fixtures, or the pinned datasets (../shared).
RECORDING_ROOTS = ("fixtures", "shared")


@dataclass(frozen=True)
class SourceSpec:
    """What a source is. Checked on construction, so a bad catalog entry fails at import."""

    key: str
    name: str
    kind: SourceKind
    tier: int
    organisation: str
    homepage: str
    default_urls: tuple[str, ...]
    cadence: Cadence
    parser_version: str
    collection: str
    description: str
    required_env: tuple[str, ...] = ()
    optional_env: tuple[str, ...] = ()
    licence: str | None = None
    #: Which ``model_info`` field names the model artefact: ``"id"`` when the source's ids are
    #: repository ids (model cards, harness logs), ``"name"`` when they are slugs of a display name.
    identity_from: Literal["id", "name"] = "name"
    #: The real payload the parser is tested on; None: unverified (not in the default nightly set).
    verified_on: Recording | None = None
    #: The source publishes its own benchmark list (LiveBench's categories, HELM's group headers) and
    #: marks each result with it (``records.DECLARED_BENCHMARK``): a benchmark the registry does not
    #: know is registered from that declaration, with a recorded decision, instead of quarantined.
    declares_benchmarks: bool = False

    def __post_init__(self) -> None:
        if not KEY_RE.match(self.key):
            raise SourceSpecError(f"source key {self.key!r} must be lower-case words joined by '-'")
        if not 1 <= self.tier <= 4:
            raise SourceSpecError(f"source {self.key}: tier must be 1-4 (got {self.tier})")
        if not self.default_urls and self.cadence != "manual":
            raise SourceSpecError(f"source {self.key}: a scheduled source needs default URLs")
        for url in self.default_urls:
            if not url.startswith("https://"):
                raise SourceSpecError(f"source {self.key}: default URL {url!r} is not https")
        for var in (*self.required_env, *self.optional_env):
            if not re.fullmatch(r"EVALHOUSE_[A-Z0-9_]+", var):
                raise SourceSpecError(f"source {self.key}: env var {var!r} must start with EVALHOUSE_")

    @property
    def module_name(self) -> str:
        return self.key.replace("-", "_")

    def as_dict(self) -> dict[str, object]:
        """The catalog entry as ``evalhouse sources --json`` prints it."""
        return {
            "key": self.key,
            "name": self.name,
            "kind": self.kind,
            "tier": self.tier,
            "organisation": self.organisation,
            "homepage": self.homepage,
            "default_urls": list(self.default_urls),
            "cadence": self.cadence,
            "required_env": list(self.required_env),
            "optional_env": list(self.optional_env),
            "parser_version": self.parser_version,
            "collection": self.collection,
            "licence": self.licence,
            "description": self.description,
            "declares_benchmarks": self.declares_benchmarks,
            "verified_on": self.verified_on.as_dict() if self.verified_on else "unverified",
        }


@dataclass(frozen=True)
class SourceState:
    """What the warehouse remembers about a source, plus the environment the plan may read."""

    last_payload_sha256: dict[str, str] = field(default_factory=dict)  # url -> sha256
    etags: dict[str, str] = field(default_factory=dict)  # url -> ETag
    last_modified: dict[str, str] = field(default_factory=dict)  # url -> Last-Modified
    env: Mapping[str, str] = field(default_factory=dict)

    def conditional(self, url: str) -> dict[str, str | None]:
        """The validators of the last fetch of ``url``, for a conditional GET (``FetchRequest(**...)``)."""
        return {"etag": self.etags.get(url), "last_modified": self.last_modified.get(url)}


@dataclass(frozen=True)
class FetchMeta:
    """Fetch facts a parser may use (never to decide identity: records must not carry fetch time)."""

    source_key: str
    url: str
    sha256: str
    retrieved_at: datetime
    content_type: str | None = None
    label: str | None = None


class SourceModule(Protocol):
    SOURCE: SourceSpec

    def plan(self, state: SourceState) -> list[FetchRequest]: ...

    def parse(self, body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]: ...


class ParseError(InputError):
    """A payload is unreadable as a whole (wrong format, truncated, changed header)."""


class LayoutChanged(ParseError):
    """The parser's selectors find nothing: the page's (or payload's) structure changed."""


class EmptyPlaceholder(ParseError):
    """The expected container is present but empty (e.g. a table now filled by client-side JS)."""
