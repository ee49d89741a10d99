"""The frozen benchmark text store: descriptions, paraphrases and task queries with hashes.

BoB places each benchmark in semantic space through a 40–80-word description (paper 004, §3 and
App. L.3–L.6). The texts are experimental inputs, so they are frozen in
``evalhouse/analytics/bob/benchmark_texts.yaml`` with the sha256 of their exact UTF-8 bytes;
loading re-hashes every text and refuses a file whose text and hash disagree. The fourteen
Artificial Analysis texts are the paper's §L.4 verbatim (origin ``paper-004 §L.4``); texts for
AA benchmarks the paper did not use were written for evalhouse (origin ``evalhouse``).

Extra texts (for example the ``description`` field of the curation benchmark registry) merge in
through :meth:`TextStore.merge`, which never silently replaces a frozen text.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from evalhouse.common.naming import slug
from evalhouse.common.resources import package_text
from evalhouse.errors import InputError

TextKind = Literal["description", "paraphrase", "query"]
TEXT_KINDS: tuple[str, ...] = ("description", "paraphrase", "query")
PAPER_ORIGIN = "paper-004 §L.4"
QUERY_ORIGIN = "paper-004 §L.6"
EVALHOUSE_ORIGIN = "evalhouse"
QUERY_PREFIX = "query:"

# Labels used in the paper's §L.4 → canonical benchmark ids.
PAPER_LABELS: dict[str, str] = {
    "AIME": "aime",
    "AIME’25": "aime_2025",
    "MATH-500": "math_500",
    "GPQA Diamond": "gpqa_diamond",
    "HLE": "hle",
    "MMLU-Pro": "mmlu_pro",
    "LiveCodeBench": "livecodebench",
    "SciCode": "scicode",
    "IFBench": "ifbench",
    "Long-context reasoning": "aa_lcr",
    "Terminal-Bench Hard": "terminal_bench_hard",
    "Terminal-Bench 2.1": "terminal_bench_v2_1",
    "${\\tau }^2$-Bench": "tau2_bench",
    "$\\tau$-Bench Banking": "tau3_banking",
}


class MissingTextError(InputError, KeyError):
    """A benchmark has no text of the requested kind in the store."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


def text_sha256(text: str) -> str:
    """sha256 of the exact UTF-8 bytes of ``text`` (no normalisation: the text is the input)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class BenchmarkText:
    """One frozen text: which benchmark, which kind, the words, where they came from."""

    benchmark_id: str
    kind: str
    text: str
    origin: str

    @property
    def sha256(self) -> str:
        return text_sha256(self.text)

    @property
    def n_words(self) -> int:
        return len(self.text.split())


@dataclass(frozen=True)
class TextStore:
    """Texts keyed by ``(benchmark_id, kind)``; queries use ids prefixed ``query:``."""

    texts: Mapping[tuple[str, str], BenchmarkText]
    names: Mapping[str, str] = field(default_factory=dict)

    # ------------------------------------------------------------ access
    def get(self, benchmark_id: str, kind: str = "description") -> BenchmarkText:
        """The text of one benchmark; raises :class:`MissingTextError` naming it when absent."""
        if kind not in TEXT_KINDS:
            raise InputError(f"kind={kind!r} is not one of {list(TEXT_KINDS)}")
        try:
            return self.texts[(benchmark_id, kind)]
        except KeyError:
            known = sorted({b for b, k in self.texts if k == kind})
            raise MissingTextError(
                f"no {kind} for benchmark {benchmark_id!r} in the text store; add one "
                f"(TextStore.merge or benchmark_texts.yaml). Known: {known}"
            ) from None

    def description(self, benchmark_id: str) -> str:
        return self.get(benchmark_id, "description").text

    def paraphrase(self, benchmark_id: str) -> str:
        return self.get(benchmark_id, "paraphrase").text

    def texts_for(self, benchmark_ids: Iterable[str], kind: str = "description") -> list[str]:
        """Texts in the order given; every missing benchmark is named in one error."""
        ids = list(benchmark_ids)
        missing = [b for b in ids if (b, kind) not in self.texts]
        if missing:
            raise MissingTextError(
                f"no {kind} in the text store for benchmark(s) {missing}; add them via "
                "TextStore.merge (e.g. registry descriptions) or benchmark_texts.yaml"
            )
        return [self.texts[(b, kind)].text for b in ids]

    def benchmarks(self, kind: str = "description") -> list[str]:
        return sorted(b for b, k in self.texts if k == kind and not b.startswith(QUERY_PREFIX))

    def query(self, name: str) -> str:
        """A stored canonical task query (paper §L.6), by short name or ``query:`` id."""
        key = name if name.startswith(QUERY_PREFIX) else QUERY_PREFIX + name
        return self.get(key, "query").text

    def queries(self) -> dict[str, str]:
        return {b[len(QUERY_PREFIX) :]: t.text for (b, k), t in self.texts.items() if k == "query"}

    def corpus(self) -> list[str]:
        """Every description and paraphrase, sorted by (benchmark, kind): a fit corpus (TF-IDF)."""
        return [
            self.texts[key].text
            for key in sorted(self.texts)
            if key[1] in ("description", "paraphrase") and not key[0].startswith(QUERY_PREFIX)
        ]

    def __len__(self) -> int:
        return len(self.texts)

    # ------------------------------------------------------------ extension
    def merge(
        self,
        extra: Mapping[str, str | Mapping[str, str]],
        origin: str = "registry",
        *,
        overwrite: bool = False,
    ) -> TextStore:
        """Return a new store with extra texts added.

        Parameters
        ----------
        extra : mapping
            ``benchmark_id -> description`` or ``benchmark_id -> {kind: text}``, e.g. the
            ``description`` fields of ``evalhouse/curation/benchmarks.yaml``.
        origin : str
            Recorded origin of the new texts.
        overwrite : bool
            Replace an existing text of the same kind. By default the frozen text wins and the
            extra one is ignored, so a registry edit cannot silently change an experiment.
        """
        texts = dict(self.texts)
        for bid, value in extra.items():
            items = {"description": value} if isinstance(value, str) else dict(value)
            for kind, text in items.items():
                if kind not in TEXT_KINDS:
                    raise InputError(f"{bid}: kind {kind!r} is not one of {list(TEXT_KINDS)}")
                if not isinstance(text, str) or not text.strip():
                    raise InputError(f"{bid}: empty {kind} text")
                if (bid, kind) in texts and not overwrite:
                    continue
                texts[(bid, kind)] = BenchmarkText(bid, kind, text, origin)
        return TextStore(texts=texts, names=dict(self.names))

    def rows(self) -> list[tuple[str, str, str, str, str]]:
        """``(benchmark_id, kind, text, text_sha256, origin)`` rows for ``benchmark_text``."""
        return [(t.benchmark_id, t.kind, t.text, t.sha256, t.origin) for _, t in sorted(self.texts.items())]


DEFAULT_TEXTS = "benchmark_texts.yaml"


def load_text_store(
    path: str | Path | None = None,
    extra: Mapping[str, str | Mapping[str, str]] | None = None,
    extra_origin: str = "registry",
) -> TextStore:
    """Load the frozen text store (the packaged YAML by default), verifying every hash.

    Parameters
    ----------
    path : path, optional
        A YAML file in the packaged format; defaults to ``data/benchmark_texts.yaml``.
    extra : mapping, optional
        Extra texts merged with :meth:`TextStore.merge` (frozen texts win).
    extra_origin : str
        Origin recorded for the extra texts.
    """
    if path is None:
        raw = package_text("evalhouse.analytics.bob", DEFAULT_TEXTS)
        where = f"evalhouse/analytics/bob/{DEFAULT_TEXTS}"
    else:
        raw = Path(path).read_text("utf-8")
        where = str(path)
    doc = yaml.safe_load(raw)
    texts: dict[tuple[str, str], BenchmarkText] = {}
    names: dict[str, str] = {}
    for bid, entry in (doc.get("benchmarks") or {}).items():
        names[bid] = entry.get("name", bid)
        for kind in ("description", "paraphrase"):
            if kind not in entry:
                continue
            texts[(bid, kind)] = _checked(bid, kind, entry[kind], where)
    for qid, entry in (doc.get("queries") or {}).items():
        key = QUERY_PREFIX + qid
        names[key] = entry.get("name", qid)
        texts[(key, "query")] = _checked(key, "query", entry["canonical"], where)
    store = TextStore(texts=texts, names=names)
    return store.merge(extra, origin=extra_origin) if extra else store


def _checked(bid: str, kind: str, entry: Mapping[str, Any], where: str) -> BenchmarkText:
    text = entry["text"]
    want = entry.get("sha256")
    got = text_sha256(text)
    if want is not None and want != got:
        raise InputError(
            f"{where}: {bid} {kind} text does not match its sha256 ({want[:12]}… ≠ {got[:12]}…); "
            "frozen texts must not be edited in place"
        )
    return BenchmarkText(bid, kind, text, entry.get("origin", "unknown"))


def parse_paper_l4(paper_text: str) -> dict[str, dict[str, str]]:
    """Extract the §L.4 descriptions and paraphrases from the paper-004 text, keyed by canonical id.

    The extracted text has one paragraph per line: ``<label>. Description. <text>`` followed by
    ``Paraphrase. <text>``. Used to build and to verify the frozen store.
    """
    start = paper_text.index("L.4 Benchmark descriptions and paraphrases")
    end = paper_text.index("L.5 Query canonicalization", start)
    lines = [ln.strip() for ln in paper_text[start:end].splitlines() if ln.strip()]
    out: dict[str, dict[str, str]] = {}
    current: str | None = None
    for line in lines:
        m = re.match(r"^(?P<label>.+?)\. Description\. (?P<text>.+)$", line)
        if m and m.group("label") in PAPER_LABELS:
            current = PAPER_LABELS[m.group("label")]
            out[current] = {"description": m.group("text")}
        elif line.startswith("Paraphrase. ") and current is not None:
            out[current]["paraphrase"] = line[len("Paraphrase. ") :]
            current = None
    missing = sorted(set(PAPER_LABELS.values()) - set(out))
    if missing:
        raise InputError(f"§L.4 parse found no texts for {missing}")
    return out


def parse_paper_l6(paper_text: str) -> dict[str, dict[str, str]]:
    """Extract the §L.6 task queries (raw and canonical form) keyed by snake-case name."""
    start = paper_text.index("L.6 Task-query texts")
    end = paper_text.index("L.7 ", start)
    lines = [ln.strip() for ln in paper_text[start:end].splitlines() if ln.strip()]
    out: dict[str, dict[str, str]] = {}
    name: str | None = None
    for line in lines:
        m = re.match(r"^(?P<name>[A-Z][A-Za-z ]+)\. Query\. (?P<text>.+)$", line)
        if m:
            name = m.group("name")
            out[_snake(name)] = {"name": name, "raw": m.group("text")}
        elif line.startswith("Canonical form. ") and name is not None:
            out[_snake(name)]["canonical"] = line[len("Canonical form. ") :]
            name = None
    return out


def _snake(name: str) -> str:
    return slug(name, sep="_")


def ensure_text_tables(con: Any) -> None:
    """Refuse a connection without the ``embedding`` and ``benchmark_text`` tables.

    They are warehouse tables (migration 0001), so the cache lives with the data it serves;
    open a warehouse with ``evalhouse.warehouse.db.Warehouse.open`` to get them.
    """
    names = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    missing = sorted({"embedding", "benchmark_text"} - names)
    if missing:
        raise RuntimeError(f"no {', '.join(missing)} table here: embeddings are cached in an evalhouse warehouse")


def store_texts(con: Any, store: TextStore) -> int:
    """Insert every text into ``benchmark_text``; existing (id, kind, sha256) rows are kept.

    Returns the number of rows newly inserted.
    """
    before = con.execute("SELECT count(*) FROM benchmark_text").fetchone()[0]
    con.executemany(
        "INSERT INTO benchmark_text (benchmark_id, kind, text, text_sha256, origin) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        store.rows(),
    )
    after = con.execute("SELECT count(*) FROM benchmark_text").fetchone()[0]
    return int(after - before)
