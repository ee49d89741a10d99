"""--mirror: URL → mirror path mapping, mirror trees, and whole fetches replayed from a mirror."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path, PurePosixPath
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, for the shared httpserver helper

from httpserver import serve

from evalhouse.ingest.fetch import FetchError, FetchRequest
from evalhouse.ingest.http import HttpClient
from evalhouse.ingest.mirror import build_mirror, mirror_relpath, mirror_url

LIVE = "https://api.example.com/v1/models.json"


def q(canonical_query: str) -> str:
    return "__q" + hashlib.sha256(canonical_query.encode()).hexdigest()[:16]


def test_directory_mirror_maps_to_file_url(tmp_path: Path) -> None:
    expected = tmp_path.resolve() / "api.example.com" / "v1" / "models.json"
    assert mirror_url(LIVE, str(tmp_path)) == expected.as_uri()
    assert mirror_url(LIVE, tmp_path.resolve().as_uri()) == expected.as_uri()


def test_url_mirror_maps_under_base() -> None:
    base = "http://127.0.0.1:8765/base"
    assert mirror_url(LIVE, base) == f"{base}/api.example.com/v1/models.json"
    assert mirror_url(LIVE, base + "/") == f"{base}/api.example.com/v1/models.json"


def test_query_is_hashed_order_free_and_secrets_dropped() -> None:
    a = mirror_relpath(LIVE + "?page=2&limit=50&api_key=K1")
    b = mirror_relpath(LIVE + "?limit=50&page=2&api_key=OTHER-KEY")
    assert a == b == PurePosixPath("api.example.com/v1", f"models{q('limit=50&page=2')}.json")
    assert mirror_relpath(LIVE + "?page=3") != a
    assert mirror_relpath(LIVE + "?token=t") == mirror_relpath(LIVE)  # only secrets: no suffix
    declared = mirror_relpath(LIVE + "?sess=abc", secret_params={"sess"})
    assert declared == PurePosixPath("api.example.com/v1/models.json")
    assert "K1" not in str(a) and "abc" not in str(declared)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://h.example", "h.example/_index"),
        ("https://h.example/dir/", "h.example/dir/_index"),
        ("http://H.Example:8080/x", "h.example_8080/x"),
        ("https://h.example:443/x", "h.example/x"),
        ("https://h.example/a%20b/c d.csv#frag", "h.example/a%20b/c%20d.csv"),
        ("https://h.example/../../etc/passwd", "h.example/%2E%2E/%2E%2E/etc/passwd"),
        ("https://h.example/a//b/./c", "h.example/a/b/%2E/c"),
        ("https://h.example/data?x=1", f"h.example/data{q('x=1')}"),
    ],
)
def test_mirror_relpath_rules(url: str, expected: str) -> None:
    assert str(mirror_relpath(url)) == expected


def test_local_urls_pass_through_and_bad_schemes_are_rejected(tmp_path: Path) -> None:
    assert mirror_url("/data/board.json", str(tmp_path)) == "/data/board.json"
    assert mirror_url("file:///data/board.json", str(tmp_path)) == "file:///data/board.json"
    with pytest.raises(ValueError, match="http"):
        mirror_relpath("ftp://h.example/x")
    with pytest.raises(ValueError, match="query"):
        mirror_url(LIVE, "http://127.0.0.1:1/base?x=1")


@given(
    segments=st.lists(
        st.text(alphabet=st.characters(exclude_categories=("Cs",)), min_size=1, max_size=12),
        min_size=1,
        max_size=5,
    )
)
def test_mirror_paths_never_escape_the_mirror(segments: list[str]) -> None:
    url = "https://h.example/" + "/".join(quote(s, safe="") for s in segments)
    rel = mirror_relpath(url)
    assert rel == mirror_relpath(url)  # deterministic
    assert rel.parts[0] == "h.example"
    assert all(part not in ("", ".", "..") and "/" not in part for part in rel.parts)
    assert not rel.is_absolute()


def test_build_mirror_writes_tree_and_rejects_collisions(tmp_path: Path) -> None:
    written = build_mirror(
        tmp_path,
        {LIVE: b"[1]", LIVE + "?page=2": b"[2]", "https://other.org/": b"<html>"},
    )
    assert written[LIVE].read_bytes() == b"[1]"
    assert written[LIVE + "?page=2"].name == f"models{q('page=2')}.json"
    assert (tmp_path / "other.org" / "_index").read_bytes() == b"<html>"
    assert not list(tmp_path.rglob("*.tmp"))
    with pytest.raises(ValueError, match="same mirror file") as info:
        build_mirror(tmp_path, {LIVE + "?api_key=SEKRET-A": b"a", LIVE + "?api_key=SEKRET-B": b"b"})
    assert "SEKRET" not in str(info.value)


def test_fetch_through_url_mirror_served_over_http(tmp_path: Path) -> None:
    build_mirror(
        tmp_path,
        {
            LIVE + "?page=2": b'{"page": 2}',
            "https://h.example/a%20b/c.csv": b"a,b\n",
        },
    )
    with serve(static_dir=tmp_path) as srv:
        request = FetchRequest(
            url=LIVE,
            params={"page": "2", "api_key": "SEKRET-mirror-key"},
            headers={"x-api-key": "SEKRET-mirror-header", "Accept": "application/json"},
            etag='"old"',
        )
        with HttpClient(mirror=srv.url + "/", sleep=lambda _s: None, trust_env=False) as c:
            result = c.fetch(request)
            spaced = c.fetch("https://h.example/a%20b/c.csv")
            with pytest.raises(FetchError) as info:
                c.fetch("https://api.example.com/v1/not-pinned.json")
        (seen, *_rest) = srv.requests
    assert result.status == 200
    assert result.body == b'{"page": 2}'
    assert result.mirrored_from == f"{LIVE}?page=2&api_key=[REDACTED]"
    assert result.url.startswith(srv.url + "/api.example.com/v1/models__q")
    assert spaced.body == b"a,b\n"
    assert (info.value.kind, info.value.status, info.value.attempts) == ("http_status", 404, 1)
    # the mirror gets neither credentials nor validators: a replay is deterministic and safe
    assert seen.query == {}
    assert "x-api-key" not in seen.headers and "if-none-match" not in seen.headers
    assert seen.headers["accept"] == "application/json"
    assert "SEKRET" not in seen.raw_path


def test_fetch_through_directory_mirror(tmp_path: Path) -> None:
    build_mirror(tmp_path, {LIVE: b"[]"})
    with HttpClient(mirror=tmp_path) as c:
        result = c.fetch(FetchRequest(url=LIVE, params={"token": "SEKRET"}))
        with pytest.raises(FetchError) as info:
            c.fetch(LIVE + "?page=9")
    assert result.body == b"[]"
    assert result.status == 200
    assert result.content_type == "application/json"
    assert result.mirrored_from == f"{LIVE}?token=[REDACTED]"
    assert result.url == (tmp_path.resolve() / "api.example.com/v1/models.json").as_uri()
    assert (info.value.kind, info.value.status) == ("http_status", 404)


def test_a_post_body_names_its_file_order_and_spacing_free() -> None:
    read = "https://fn.example/functions/v1/leaderboard-read"
    a = mirror_relpath(read, body=b'{"package": "tb/tb-2", "name": "2-0"}')
    same = mirror_relpath(read, body=b'{"name":"2-0","package":"tb/tb-2"}')
    other = mirror_relpath(read, body=b'{"name":"3-0-0","package":"tb/tb"}')
    assert a == same != other
    assert a.name.startswith("leaderboard-read__b") and len(a.name) == len("leaderboard-read__b") + 16
    assert mirror_relpath(read + "?v=1", body=b"{}").name.startswith("leaderboard-read__q")
    assert "__b" in mirror_relpath(read + "?v=1", body=b"{}").name
    assert mirror_relpath(read, body=b"not json") != mirror_relpath(read, body=b"not  json")  # bytes as sent


def test_posts_replay_from_a_mirror_served_over_http(tmp_path: Path) -> None:
    read = "https://fn.example/functions/v1/leaderboard-read"
    written = build_mirror(
        tmp_path, {(read, b'{"name":"2-0"}'): b'{"rows": [2]}', (read, b'{"name":"3-0"}'): b'{"rows": [3]}'}
    )
    assert len({p for p in written.values()}) == 2
    with serve(static_dir=tmp_path) as srv, HttpClient(mirror=srv.url, sleep=lambda _s: None, trust_env=False) as c:
        two = c.fetch(FetchRequest.post_json(read, {"name": "2-0"}))
        three = c.fetch(FetchRequest.post_json(read, {"name": "3-0"}))
        with pytest.raises(FetchError) as info:
            c.fetch(FetchRequest.post_json(read, {"name": "4-0"}))
        methods = {r.method for r in srv.requests}
    assert (two.body, three.body) == (b'{"rows": [2]}', b'{"rows": [3]}')
    assert two.mirrored_from == read and info.value.status == 404
    assert methods == {"GET"}  # a mirror is static files: the POST's payload is read by a GET
