"""Drift guards: a changed page fails loudly, a real shrink needs a person, nothing is lost quietly.

Each guard is a pure function of one :class:`Evidence` - the previous completed run's figures
and this run's fetches and parse - returning a :class:`Verdict` or ``None``. The refresh calls
:func:`evaluate` once per run (the hook marked ``DRIFT GUARDS`` in ``pipeline/refresh.py``):

* ``failed`` verdicts stop the run before anything loads, so the previous data stays as it was,
  and the run's error names the guard ("rows dropped 142 → 87 (−39%)");
* ``partial`` verdicts (one page of several is gone) load what arrived and list the URLs;
* ``accepted`` verdicts are failures a person waived with ``refresh --accept-drift SOURCE``
  (``ingest SOURCE PATH --accept-drift``); the run records each as a ``curation_decision``.

Adding a guard is one function::

    @guard
    def scale_changed(ev: Evidence) -> Verdict | None:
        ...

Guards run in the order they are defined; :func:`evaluate` keeps every verdict and the run's
reason is the first failing one. A source may tune a guard with a module-level ``DRIFT`` dict
(``{"max_row_drop": 0.10, "bounds": True}``); the defaults are in :data:`DEFAULTS`.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from evalhouse.curation.packaged_registry import PACKAGED, PackagedRegistry, resolve
from evalhouse.curation.plausibility import result_problem
from evalhouse.ingest.source import EmptyPlaceholder, LayoutChanged, ParseError
from evalhouse.schema.records import ParsedRecord, ParseFailure, ParseItem

if TYPE_CHECKING:
    from evalhouse.curation.registry import Registry

Outcome = Literal["failed", "partial", "accepted"]

DEFAULTS: dict[str, Any] = {
    "max_row_drop": 0.10,  # a fall of more than 10% of the last completed run's rows fails
    "bounds": True,  # a value outside its registry metric's bounds fails the run
    "max_scale_ratio": 10.0,  # a benchmark's median moving 10x (or 1/10) since the last run fails
    "max_quarantine_share": 0.25,  # a run that would quarantine more than a quarter of its rows fails
    # True for a paginated API: every page its follow() finds continues one listing, so a page not
    # fetched fails the run (the listing is incomplete) instead of loading it as partial.
    "pagination": False,
}
#: A benchmark's median is compared only when both runs have at least this many values for it.
MIN_VALUES_FOR_SCALE = 3
#: Fetch error kinds that are a page being gone rather than a fault: one of several -> partial.
MISSING_KINDS = frozenset({"http_status:404", "http_status:410", "robots"})
#: Markers of a bot check / challenge page served instead of the content (checked in the first 64 KiB).
BOT_MARKERS = (
    "<title>just a moment...</title>",
    "cf-browser-verification",
    "cf_chl_opt",
    "/cdn-cgi/challenge-platform/",
    "challenges.cloudflare.com",
    "attention required! | cloudflare",
    "checking your browser before accessing",
    "ddos protection by",
    "px-captcha",
    "<title>access denied</title>",
    "verify you are human",
)


@dataclass(frozen=True)
class Page:
    """One payload the run fetched, and what parsing it gave."""

    url: str
    body: bytes
    content_type: str | None
    items: list[ParseItem] = field(default_factory=list)
    error: ParseError | None = None

    @property
    def records(self) -> int:
        return sum(isinstance(i, ParsedRecord) for i in self.items)


@dataclass(frozen=True)
class Failure:
    """One page the run could not fetch (``kind`` as in :class:`evalhouse.ingest.fetch.FetchError`)."""

    url: str
    kind: str
    message: str
    status: int | None = None
    planned: bool = True

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.status}" if self.kind == "http_status" else self.kind


@dataclass(frozen=True)
class Previous:
    """The figures of the source's last completed (or partial) run."""

    run_id: str
    records: int
    by_url: Mapping[str, int] = field(default_factory=dict)
    missing: frozenset[str] = frozenset()
    medians: Mapping[str, list[float]] = field(default_factory=dict)  # key -> [median raw value, values]


@dataclass(frozen=True)
class Evidence:
    source_key: str
    pages: list[Page]
    failures: list[Failure]
    previous: Previous | None
    policy: Mapping[str, Any] = field(default_factory=lambda: dict(DEFAULTS))
    accept_drift: bool = False
    hint: str = ""
    waiver: str = ""  # how a person waives a failure for one run (default: refresh --accept-drift SOURCE)
    registry: Registry | PackagedRegistry = PACKAGED  # the run's registry (bounds guard), loaded when used
    declared_benchmarks: bool = False  # the source declares its benchmarks (as the load canonicalises)

    @property
    def records(self) -> int:
        return sum(p.records for p in self.pages)

    @property
    def waive(self) -> str:
        return self.waiver or f"refresh --accept-drift {self.source_key}"

    def figures(self) -> dict[str, Any]:
        """What the next run compares against (stored in the run's details)."""
        return {
            "records": self.records,
            "by_url": {p.url: p.records for p in self.pages},
            "missing": sorted(missing_urls(self.failures)),
            "medians": self.medians,
        }

    def results(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every result of every parsed record, with the record's locator."""
        for page in self.pages:
            for item in page.items:
                if isinstance(item, ParsedRecord):
                    for result in item.record.get("evaluation_results") or []:
                        if isinstance(result, dict):
                            yield item.locator, result

    @cached_property
    def rejections(self) -> list[tuple[str, str]]:
        """``(locator, reason)`` of every result the load would quarantine (computed once): refused
        as implausible (:mod:`evalhouse.curation.plausibility`) or by the canonicaliser."""
        results = [
            (item, index, result)
            for page in self.pages
            for item in page.items
            if isinstance(item, ParsedRecord)
            for index, result in enumerate(item.record.get("evaluation_results") or [])
            if isinstance(result, dict)
        ]
        if not results:
            return []
        # the canonicaliser (and the registries it reads) load when there are results to judge
        from evalhouse.curation.canonicalise import Canonicaliser  # noqa: PLC0415

        canon = Canonicaliser(resolve(self.registry), declared=self.declared_benchmarks)
        out = []
        for item, index, result in results:
            why = item.refused_results.get(index) or result_problem(result)
            if why is None:
                refused = canon.rejection(result, source_key=self.source_key)
                why = refused.reason if refused is not None else None
            if why is not None:
                out.append((item.locator, why))
        return out

    @property
    def parse_failures(self) -> int:
        return sum(isinstance(i, ParseFailure) for p in self.pages for i in p.items)

    @cached_property
    def medians(self) -> dict[str, list[float]]:
        """``[median raw value, number of values]`` per benchmark and metric (``name|metric``)."""
        values: dict[str, list[float]] = defaultdict(list)
        for _locator, result in self.results():
            value = _raw_value(result)
            if value is not None:
                values[_scale_key(result)].append(value)
        return {k: [statistics.median(v), len(v)] for k, v in sorted(values.items())}


def _raw_value(result: Mapping[str, Any]) -> float | None:
    details = result.get("score_details")
    score = details.get("score") if isinstance(details, Mapping) else None
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        return None
    return float(score)


def _scale_key(result: Mapping[str, Any]) -> str:
    config = result.get("metric_config") if isinstance(result.get("metric_config"), Mapping) else {}
    metric = config.get("metric_id") or config.get("metric_name") or config.get("metric_unit") or ""
    return f"{result.get('evaluation_name')}|{metric}"


def missing_urls(failures: list[Failure]) -> set[str]:
    return {f.url for f in failures if f.key in MISSING_KINDS}


def every_planned_missing(failures: list[Failure]) -> bool:
    """Every planned page failed as missing (404, 410, robots): nothing of the source is there."""
    planned = [f for f in failures if f.planned]
    return bool(planned) and all(f.key in MISSING_KINDS for f in planned)


def nothing_new_missing(failures: list[Failure], previous: Previous | None) -> bool:
    """No fetch failed, or only pages the last completed run was already missing."""
    gone = missing_urls(failures)
    if len(gone) != len(failures):
        return False
    return not gone or (previous is not None and gone <= previous.missing)


@dataclass(frozen=True)
class Verdict:
    guard: str
    outcome: Outcome
    reason: str
    urls: tuple[str, ...] = ()
    detail: Mapping[str, Any] = field(default_factory=dict)


Guard = Callable[[Evidence], "Verdict | None"]
GUARDS: list[Guard] = []


def guard(fn: Guard) -> Guard:
    """Register a guard (run in definition order)."""
    GUARDS.append(fn)
    return fn


def evaluate(ev: Evidence) -> list[Verdict]:
    return [v for g in GUARDS if (v := g(ev)) is not None]


def outcome(verdicts: list[Verdict]) -> Verdict | None:
    """The verdict that decides the run: the first failure, else the first partial."""
    for wanted in ("failed", "partial"):
        for v in verdicts:
            if v.outcome == wanted:
                return v
    return None


def policy_for(module: Any) -> dict[str, Any]:
    return {**DEFAULTS, **(getattr(module, "DRIFT", None) or {})}


# --------------------------------------------------------------------------------------------
# The guards, in the order a run's reason is chosen.


@guard
def bot_check(ev: Evidence) -> Verdict | None:
    """A Cloudflare / bot-check page came back instead of the content."""
    for page in ev.pages:
        head = page.body[:65536].decode("utf-8", "replace").casefold()
        if marker := next((m for m in BOT_MARKERS if m in head), None):
            return Verdict(
                "bot_check", "failed", f"bot check page instead of content at {page.url} ({marker!r})", (page.url,)
            )
    for failure in ev.failures:
        text = failure.message.casefold()
        if marker := next((m for m in BOT_MARKERS if m in text), None):
            return Verdict("bot_check", "failed", f"bot check page at {failure.url} ({marker!r})", (failure.url,))
    return None


@guard
def pagination_unfinished(ev: Evidence) -> Verdict | None:
    """A paginated listing not followed to its last page: a fetched page said more follow
    (``has_more``, a cursor) but the next page was not fetched. Never ``partial``, never
    ``completed``: what loaded would look like the whole listing."""
    if not ev.policy.get("pagination"):
        return None
    left = [f for f in ev.failures if not f.planned]
    if not left:
        return None
    first = left[0]
    more = f" (+{len(left) - 1} more)" if len(left) > 1 else ""
    return Verdict(
        "pagination",
        "failed",
        f"pagination not exhausted: a fetched page says more follow, but the next page {first.url} was not"
        f" fetched ({first.key}: {first.message}){more}{ev.hint}",
        tuple(f.url for f in left),
    )


@guard
def fetch_faults(ev: Evidence) -> Verdict | None:
    """Oversize body, redirect loop, timeouts, refused connections, 5xx: the run fails."""
    bad = [f for f in ev.failures if f.key not in MISSING_KINDS]
    if not bad:
        return None
    first = bad[0]
    label = {"too_large": "oversize body", "too_many_redirects": "redirect loop", "deadline": "deadline exceeded"}.get(
        first.kind, "fetch failed"
    )
    more = f" (+{len(bad) - 1} more)" if len(bad) > 1 else ""
    return Verdict(
        "fetch",
        "failed",
        f"{label} ({first.kind}): {first.message}{more}{ev.hint}",
        tuple(f.url for f in bad),
    )


@guard
def unreadable(ev: Evidence) -> Verdict | None:
    """A payload that does not parse at all (wrong format, truncated)."""
    for page in ev.pages:
        if page.error is not None and not isinstance(page.error, LayoutChanged | EmptyPlaceholder):
            return Verdict("parse", "failed", f"parse failed: {page.error}", (page.url,))
    return None


@guard
def layout_changed(ev: Evidence) -> Verdict | None:
    """The parser's selectors found nothing on a page."""
    for page in ev.pages:
        if isinstance(page.error, LayoutChanged):
            return Verdict("layout", "failed", str(page.error), (page.url,))
    return None


@guard
def empty_placeholder(ev: Evidence) -> Verdict | None:
    """A page serves its container without rows, or a page that had rows yields none."""
    for page in ev.pages:
        if isinstance(page.error, EmptyPlaceholder):
            return Verdict("empty_placeholder", "failed", str(page.error), (page.url,))
    if ev.previous is not None:
        for page in ev.pages:
            before = ev.previous.by_url.get(page.url, 0)
            if before and page.records == 0 and page.error is None:
                reason = f"empty placeholder: {page.url} yields 0 rows (the last completed run had {before})"
                return Verdict("empty_placeholder", "failed", reason, (page.url,))
    return None


@guard
def out_of_bounds(ev: Evidence) -> Verdict | None:
    """Values outside their registry metric's bounds (a unit or scale the parser no longer knows)."""
    if not ev.policy.get("bounds", True):
        return None
    bad = [f"{where}: {why}" for where, why in ev.rejections if why.startswith(("impossible value", "value "))]
    total = sum(1 for _ in ev.results())
    if not bad:
        return None
    return Verdict(
        "bounds",
        "failed",
        f"values outside registry bounds: {len(bad)} of {total} results, e.g. {bad[0]}",
        detail={"examples": bad[:5]},
    )


def _num(value: float) -> str:
    text = f"{value:.4g}"
    return text if any(c in text for c in ".en") else text + ".0"


def _waivable(ev: Evidence, name: str, reason: str, detail: dict[str, Any]) -> Verdict:
    """A failure a person may accept for one run with ``refresh --accept-drift SOURCE``."""
    if ev.accept_drift:
        return Verdict(name, "accepted", reason + "; accepted with --accept-drift", detail=detail)
    return Verdict(name, "failed", reason + f"; if this is real: {ev.waive}", detail=detail)


@guard
def scale_changed(ev: Evidence) -> Verdict | None:
    """Values that jumped scale against the last completed run (a unit switch: 0.62 -> 62.0), waivable.

    Compared per benchmark and metric on the median of the raw values: one whose median moves by
    ``max_scale_ratio`` or more (either way) where both runs have at least
    :data:`MIN_VALUES_FOR_SCALE` values, or - for boards of a row or two - the median of those
    ratios over at least three benchmarks, fails the run; it loads nothing, so the previous values
    stay.
    """
    prev = ev.previous
    if prev is None or not prev.medians:
        return None
    limit = float(ev.policy.get("max_scale_ratio", 10.0))

    def beyond(ratio: float) -> bool:  # a sign flip alone is not a unit switch
        return abs(ratio) >= limit or abs(ratio) <= 1 / limit

    compared: list[tuple[str, float, float, int]] = []  # key, before, now, fewest values of the two
    for key, (now, n_now) in ev.medians.items():
        before, n_before = prev.medians.get(key) or (None, 0)
        if before is not None and abs(before) >= 1e-9 and abs(now) >= 1e-9:
            compared.append((key, before, now, min(int(n_now), int(n_before))))
    moved = [(k, b, n) for k, b, n, _count in compared if beyond(n / b)]
    pooled = len(compared) >= 3 and beyond(statistics.median(n / b for _k, b, n, _c in compared))
    jumped = [(k, b, n) for k, b, n, count in compared if beyond(n / b) and count >= MIN_VALUES_FOR_SCALE]
    if pooled:
        jumped = jumped or moved
    if not jumped:
        return None
    key, before, now = jumped[0]
    reason = (
        f"scale changed: median {_num(before)} → {_num(now)} ({key.replace('|', ' ')}; {len(moved)} of "
        f"{len(compared)} benchmarks moved {limit:g}× or more since run {prev.run_id})"
    )
    detail = {"previous_run": prev.run_id, "jumped": [{"key": k, "before": b, "now": n} for k, b, n in jumped[:20]]}
    return _waivable(ev, "scale", reason, detail)


@guard
def mass_quarantine(ev: Evidence) -> Verdict | None:
    """A run that would quarantine more than ``max_quarantine_share`` of its rows (waivable)."""
    rejected = len(ev.rejections)
    failures = ev.parse_failures
    total = sum(1 for _ in ev.results()) + failures
    if total == 0:
        return None
    share = (rejected + failures) / total
    limit = float(ev.policy.get("max_quarantine_share", 0.25))
    if share <= limit:
        return None
    reasons: dict[str, int] = defaultdict(int)
    for _where, why in ev.rejections:
        reasons[why.split(":")[0][:80]] += 1
    for page in ev.pages:
        for item in page.items:
            if isinstance(item, ParseFailure):
                reasons[item.reason.split(":")[0][:80]] += 1
    common = ", ".join(f"{n} × {r}" for r, n in sorted(reasons.items(), key=lambda kv: -kv[1])[:3])
    reason = (
        f"mass quarantine: {rejected + failures} of {total} rows would be quarantined ({share:.0%}, more than "
        f"{limit:.0%}): {common}"
    )
    return _waivable(ev, "mass_quarantine", reason, {"quarantined": rejected + failures, "rows": total})


@guard
def rows_dropped(ev: Evidence) -> Verdict | None:
    """More than ``max_row_drop`` fewer rows than the last completed run (waivable)."""
    prev = ev.previous
    if prev is None or prev.records <= 0:
        return None
    now = ev.records
    drop = (prev.records - now) / prev.records
    if drop <= float(ev.policy.get("max_row_drop", 0.10)):
        return None
    reason = f"rows dropped {prev.records} → {now} (−{drop:.0%}) since run {prev.run_id}"
    detail = {"previous": prev.records, "now": now, "previous_run": prev.run_id, "drop": round(drop, 4)}
    if ev.accept_drift:
        return Verdict("row_drop", "accepted", reason + "; accepted with --accept-drift", detail=detail)
    return Verdict("row_drop", "failed", reason + f"; if the shrink is real: {ev.waive}", detail=detail)


@guard
def pages_missing(ev: Evidence) -> Verdict | None:
    """One or more of several pages gone (404/410, or forbidden by robots.txt): partial."""
    missing = [f for f in ev.failures if f.key in MISSING_KINDS]
    if not missing:
        return None
    if not ev.pages:
        return Verdict(
            "pages_missing",
            "failed",
            f"every page is missing: {missing[0].message} at {missing[0].url}{ev.hint}",
            tuple(f.url for f in missing),
        )
    urls = tuple(f.url for f in missing)
    kinds = sorted({f.key.replace("http_status:", "HTTP ") for f in missing})
    shown = ", ".join(urls[:10]) + (f" and {len(urls) - 10} more" if len(urls) > 10 else "")
    return Verdict(
        "pages_missing",
        "partial",
        f"{len(urls)} of {len(urls) + len(ev.pages)} pages missing ({', '.join(kinds)}): {shown}",
        urls,
    )
