"""The fetch layer against a real loopback server and the real httpx client (nothing mocked)."""

from __future__ import annotations

import json
import logging
import pickle
import random
import sys
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/, for the shared httpserver helper

from httpserver import Reply, ScriptedServer, serve

from evalhouse import __version__
from evalhouse.common.redaction import REDACTED, redact_text, redact_url
from evalhouse.ingest.fetch import FetchError, FetchRequest, FetchResult, parse_retry_after
from evalhouse.ingest.http import DEFAULT_USER_AGENT, HttpClient


class Sleeps(list[float]):
    """Stands in for time.sleep: records the backoff schedule instead of waiting it out."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def client(sleeps: Sleeps | None = None, **kwargs: object) -> HttpClient:
    options: dict[str, object] = {
        "timeout": 2.0,
        "max_retries": 4,
        "backoff_base": 0.5,
        "backoff_max": 60.0,
        "sleep": sleeps if sleeps is not None else Sleeps(),
        "trust_env": False,  # a developer's HTTP_PROXY must not capture loopback traffic
    }
    options.update(kwargs)
    return HttpClient(**options)  # type: ignore[arg-type]


@pytest.fixture
def server() -> ScriptedServer:
    with serve() as srv:
        yield srv


def wait_until(predicate: object, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


# --------------------------------------------------------------------------------------------
# retries


def test_429_honours_retry_after_then_succeeds(server: ScriptedServer) -> None:
    server.route(
        "/scores.json",
        Reply(429, b"slow down", headers={"Retry-After": "7"}),
        Reply(200, b'{"ok": true}', headers={"Content-Type": "application/json"}),
    )
    sleeps = Sleeps()
    with client(sleeps) as c:
        result = c.fetch(server.url_for("/scores.json"))
    assert sleeps == [7.0]
    assert result.attempts == 2
    assert result.status == 200
    assert result.body == b'{"ok": true}'
    assert result.content_type == "application/json"
    assert len(server.requests_for("/scores.json")) == 2


def test_retry_after_is_capped_by_backoff_max(server: ScriptedServer) -> None:
    server.route("/x", Reply(503, headers={"Retry-After": "3600"}), Reply(200, b"ok"))
    sleeps = Sleeps()
    with client(sleeps, backoff_max=5.0) as c:
        assert c.fetch(server.url_for("/x")).body == b"ok"
    assert sleeps == [5.0]


def test_retry_after_http_date_is_parsed() -> None:
    now = datetime(2026, 9, 1, 3, 17, 0, tzinfo=UTC)
    later = format_datetime(now + timedelta(seconds=42), usegmt=True)
    assert parse_retry_after(later, now=now) == 42.0
    assert parse_retry_after("12", now=now) == 12.0
    assert parse_retry_after(format_datetime(now - timedelta(hours=1), usegmt=True), now=now) == 0
    assert parse_retry_after("soon", now=now) is None
    assert parse_retry_after(None) is None


def test_500_three_times_then_success_with_seeded_full_jitter(server: ScriptedServer) -> None:
    server.route("/flaky", Reply(500), Reply(500), Reply(500), Reply(200, b"fine"))
    sleeps = Sleeps()
    with client(sleeps, max_retries=4, backoff_base=1.0, rng=random.Random(7)) as c:
        result = c.fetch(server.url_for("/flaky"))
    assert result.body == b"fine"
    assert result.attempts == 4
    expected_rng = random.Random(7)
    assert sleeps == [expected_rng.uniform(0.0, 2.0**i) for i in range(3)]
    assert len(server.requests_for("/flaky")) == 4


def test_backoff_without_jitter_is_exponential_and_capped(server: ScriptedServer) -> None:
    server.route("/down", Reply(502))
    sleeps = Sleeps()
    options = {"max_retries": 4, "backoff_base": 1.0, "backoff_max": 3.0, "jitter": False}
    with client(sleeps, **options) as c, pytest.raises(FetchError):
        c.fetch(server.url_for("/down"))
    assert sleeps == [1.0, 2.0, 3.0, 3.0]


def test_500_forever_gives_up_after_max_retries(server: ScriptedServer) -> None:
    server.route("/broken", Reply(500, b"internal error"))
    with client(max_retries=2) as c, pytest.raises(FetchError) as info:
        c.fetch(server.url_for("/broken"))
    err = info.value
    assert err.kind == "http_status"
    assert err.status == 500
    assert err.attempts == 3
    assert "internal error" in str(err)
    assert len(server.requests_for("/broken")) == 3


def test_404_is_not_retried(server: ScriptedServer) -> None:
    server.route("/gone", Reply(404, b"no such leaderboard"))
    sleeps = Sleeps()
    with client(sleeps) as c, pytest.raises(FetchError) as info:
        c.fetch(server.url_for("/gone"))
    assert (info.value.kind, info.value.status, info.value.attempts) == ("http_status", 404, 1)
    assert "no such leaderboard" in str(info.value)
    assert sleeps == []
    assert len(server.requests_for("/gone")) == 1


def test_timeout_is_retried_then_succeeds(server: ScriptedServer) -> None:
    server.route("/slow", Reply(200, b"late", delay=2.0), Reply(200, b"prompt"))
    with client(timeout=0.2) as c:
        result = c.fetch(server.url_for("/slow"))
    assert result.body == b"prompt"
    assert result.attempts == 2


def test_timeout_forever_is_a_timeout_error(server: ScriptedServer) -> None:
    server.route("/stuck", Reply(200, b"never", delay=2.0))
    started = time.monotonic()
    with client(timeout=0.2, max_retries=1) as c, pytest.raises(FetchError) as info:
        c.fetch(server.url_for("/stuck"))
    assert info.value.kind == "timeout"
    assert info.value.attempts == 2
    assert info.value.status is None
    assert len(server.requests_for("/stuck")) == 2
    assert time.monotonic() - started < 1.9  # gave up on the client's timeout, not the server's


def test_read_timeout_mid_body_is_a_timeout(server: ScriptedServer) -> None:
    server.route("/drip", Reply(200, b"body", body_delay=2.0))
    with client(timeout=0.2, max_retries=0) as c, pytest.raises(FetchError) as info:
        c.fetch(server.url_for("/drip"))
    assert info.value.kind == "timeout"


def test_connection_reset_is_retried_then_succeeds(server: ScriptedServer) -> None:
    server.route("/reset", Reply(reset=True), Reply(200, b"back"))
    sleeps = Sleeps()
    with client(sleeps) as c:
        result = c.fetch(server.url_for("/reset"))
    assert result.body == b"back"
    assert result.attempts == 2
    assert len(sleeps) == 1


def test_connection_reset_forever_is_a_connection_error(server: ScriptedServer) -> None:
    server.route("/reset", Reply(reset=True))
    with client(max_retries=2) as c, pytest.raises(FetchError) as info:
        c.fetch(server.url_for("/reset"))
    assert info.value.kind == "connection"
    assert info.value.attempts == 3
    assert len(server.requests_for("/reset")) == 3


def test_truncated_body_is_retried(server: ScriptedServer) -> None:
    server.route("/cut", Reply(200, b"abc", content_length=100), Reply(200, b"abcdef"))
    with client() as c:
        result = c.fetch(server.url_for("/cut"))
    assert result.body == b"abcdef"
    assert result.attempts == 2


def test_nothing_listening_is_a_connection_error() -> None:
    with serve() as srv:
        url = srv.url_for("/x")
    with client(max_retries=1) as c, pytest.raises(FetchError) as info:
        c.fetch(url)
    assert info.value.kind == "connection"
    assert info.value.attempts == 2


# --------------------------------------------------------------------------------------------
# redirects


def test_redirect_chain_within_bound_is_followed(server: ScriptedServer) -> None:
    server.route("/a", Reply(301, headers={"Location": "/b"}))
    server.route("/b", Reply(302, headers={"Location": server.url_for("/c?page=2")}))
    server.route("/c", Reply(200, b"landed"))
    with client(max_redirects=2) as c:
        result = c.fetch(server.url_for("/a"))
    assert result.body == b"landed"
    assert result.url == server.url_for("/c?page=2")
    assert result.attempts == 1
    assert [r.path for r in server.requests] == ["/a", "/b", "/c"]


def test_redirect_chain_too_long_is_an_error(server: ScriptedServer) -> None:
    for i in range(4):
        server.route(f"/r{i}", Reply(307, headers={"Location": f"/r{i + 1}"}))
    server.route("/r4", Reply(200, b"too far"))
    with client(max_redirects=3) as c, pytest.raises(FetchError) as info:
        c.fetch(server.url_for("/r0"))
    assert info.value.kind == "too_many_redirects"
    assert not server.requests_for("/r4")


def test_redirect_loop_is_bounded(server: ScriptedServer) -> None:
    server.route("/loop", Reply(302, headers={"Location": "/loop"}))
    with client(max_redirects=5) as c, pytest.raises(FetchError) as info:
        c.fetch(server.url_for("/loop"))
    assert info.value.kind == "too_many_redirects"
    assert len(server.requests_for("/loop")) == 6


def test_cross_origin_redirect_drops_credentials(server: ScriptedServer) -> None:
    with serve({"/cdn/file.json": Reply(200, b"{}")}) as cdn:
        server.route("/api", Reply(302, headers={"Location": cdn.url_for("/cdn/file.json")}))
        request = FetchRequest(
            url=server.url_for("/api"),
            headers={"x-api-key": "K-cross-origin-1234", "Accept": "application/json"},
        )
        with client() as c:
            assert c.fetch(request).body == b"{}"
        (sent_to_cdn,) = cdn.requests_for("/cdn/file.json")
    (sent_to_api,) = server.requests_for("/api")
    assert sent_to_api.headers["x-api-key"] == "K-cross-origin-1234"
    assert "x-api-key" not in sent_to_cdn.headers
    assert sent_to_cdn.headers["accept"] == "application/json"


# --------------------------------------------------------------------------------------------
# size cap


def test_declared_length_over_max_bytes_fails_before_reading(server: ScriptedServer) -> None:
    server.route("/big", Reply(200, b"x" * 65536, repeat=512))  # 32 MiB, Content-Length set
    with client(max_bytes=1000) as c, pytest.raises(FetchError) as info:
        c.fetch(server.url_for("/big"))
    assert info.value.kind == "too_large"
    assert info.value.attempts == 1  # not retried
    assert "33554432" in str(info.value)


def test_streamed_body_over_max_bytes_stops_early(server: ScriptedServer) -> None:
    total = 65536 * 512  # 32 MiB, close-delimited: the cap can only be enforced while streaming
    server.route("/stream", Reply(200, b"x" * 65536, repeat=512, content_length=False))
    with client(max_bytes=100_000) as c, pytest.raises(FetchError) as info:
        c.fetch(server.url_for("/stream"))
    assert info.value.kind == "too_large"
    (record,) = server.requests_for("/stream")
    assert wait_until(lambda: record.aborted), "the client should hang up mid-body"
    assert record.bytes_sent < total


def test_body_of_exactly_max_bytes_is_accepted(server: ScriptedServer) -> None:
    server.route("/edge", Reply(200, b"y" * 4096, content_length=False))
    with client(max_bytes=4096) as c:
        assert c.fetch(server.url_for("/edge")).body == b"y" * 4096


# --------------------------------------------------------------------------------------------
# conditional GET, user agent, result shape


def test_conditional_get_round_trip(server: ScriptedServer) -> None:
    stamp = "Wed, 21 Oct 2026 07:28:00 GMT"
    server.route(
        "/board.csv",
        Reply(200, b"a,b\n1,2\n", headers={"ETag": '"v1"', "Last-Modified": stamp}),
        Reply(304, headers={"ETag": '"v1"'}),
    )
    with client() as c:
        first = c.fetch(server.url_for("/board.csv"))
        second = c.fetch(
            FetchRequest(
                url=server.url_for("/board.csv"),
                etag=first.etag,
                last_modified=first.last_modified,
            )
        )
    assert (first.etag, first.last_modified, first.not_modified) == ('"v1"', stamp, False)
    assert second.not_modified is True
    assert second.body is None
    assert second.status == 304
    assert (second.etag, second.last_modified) == ('"v1"', stamp)
    plain, conditional = server.requests_for("/board.csv")
    assert "if-none-match" not in plain.headers
    assert conditional.headers["if-none-match"] == '"v1"'
    assert conditional.headers["if-modified-since"] == stamp


def test_unsolicited_304_is_an_error(server: ScriptedServer) -> None:
    server.route("/odd", Reply(304))
    with client() as c, pytest.raises(FetchError) as info:
        c.fetch(server.url_for("/odd"))
    assert (info.value.kind, info.value.status) == ("http_status", 304)


def test_user_agent_is_descriptive(server: ScriptedServer) -> None:
    server.route("/ua", Reply(200, b"ok"))
    with client() as c:
        c.fetch(server.url_for("/ua"))
    with client(user_agent="custom-agent/1.0") as c:
        c.fetch(server.url_for("/ua"))
    default, custom = server.requests_for("/ua")
    assert default.headers["user-agent"] == DEFAULT_USER_AGENT
    assert default.headers["user-agent"].startswith(f"evalhouse/{__version__} (+https://")
    assert custom.headers["user-agent"] == "custom-agent/1.0"


def test_result_carries_provenance(server: ScriptedServer) -> None:
    server.route(
        "/p",
        Reply(
            200,
            b"[]",
            headers={"Content-Type": "application/json", "Set-Cookie": "session=abc123"},
        ),
    )
    before = datetime.now(UTC)
    with client() as c:
        result = c.fetch(FetchRequest(url=server.url_for("/p"), params={"limit": "10"}, label="models"))
    assert isinstance(result, FetchResult)
    assert result.url == server.url_for("/p?limit=10")
    assert result.label == "models"
    assert result.retrieved_at.tzinfo is UTC and result.retrieved_at >= before
    assert result.elapsed_s >= 0
    assert result.request_params == {"params": {"limit": "10"}, "headers": {}}
    assert result.headers["content-type"] == "application/json"
    assert "set-cookie" not in result.headers
    json.dumps(result.request_params)
    json.dumps(result.headers)


def test_request_is_immutable() -> None:
    params = {"page": "1"}
    request = FetchRequest(url="https://example.org/x", params=params)
    params["page"] = "2"
    assert request.params["page"] == "1"
    with pytest.raises(TypeError):
        request.params["page"] = "3"  # type: ignore[index]


# --------------------------------------------------------------------------------------------
# secrets

SECRETS = {
    "header": "SEKRET-header-5f2a9c",
    "bearer": "SEKRET-bearer-81d0e4",
    "query": "SEKRET/query+7c3b",  # needs percent-encoding on the wire
    "custom": "SEKRET-custom-44aa01",
    "inline": "SEKRET-inline-9e9e9e",
}


def secret_request(url: str) -> FetchRequest:
    return FetchRequest(
        url=url + f"?token={SECRETS['inline']}",
        params={"api_key": SECRETS["query"], "page": "2", "sess": SECRETS["custom"]},
        headers={
            "x-api-key": SECRETS["header"],
            "Authorization": f"Bearer {SECRETS['bearer']}",
            "Accept": "application/json",
        },
        secret_params=frozenset({"sess"}),
        label="secret-test",
    )


def assert_no_secret(*texts: str) -> None:
    for text in texts:
        for secret in SECRETS.values():
            assert secret not in text
            assert secret.replace("/", "%2F").replace("+", "%2B") not in text


def log_texts(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Every client-side log line, formatted; the test server itself legitimately sees secrets."""
    texts = []
    for record in caplog.records:
        if record.name.startswith("tests.httpserver"):
            continue
        texts += [caplog.handler.format(record), record.getMessage(), repr(record.args)]
    assert texts
    return texts


def test_secrets_are_sent_but_never_recorded(server: ScriptedServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    server.route("/api", Reply(200, b"{}", headers={"Content-Type": "application/json"}))
    request = secret_request(server.url_for("/api"))
    with client() as c:
        result = c.fetch(request)

    (seen,) = server.requests_for("/api")
    assert seen.query["api_key"] == [SECRETS["query"]]
    assert seen.query["token"] == [SECRETS["inline"]]
    assert seen.query["sess"] == [SECRETS["custom"]]
    assert seen.headers["x-api-key"] == SECRETS["header"]
    assert seen.headers["authorization"] == f"Bearer {SECRETS['bearer']}"

    assert f"api_key={REDACTED}" in result.url and "page=2" in result.url
    assert result.request_params["params"] == {
        "api_key": REDACTED,
        "page": "2",
        "sess": REDACTED,
    }
    assert result.request_params["headers"] == {
        "x-api-key": REDACTED,
        "Authorization": REDACTED,
        "Accept": "application/json",
    }
    assert any(r.name == "httpx" for r in caplog.records), "httpx's own request log is covered"
    assert_no_secret(
        repr(request),
        result.url,
        repr(result),
        json.dumps(result.request_params),
        json.dumps(result.headers),
        *log_texts(caplog),
    )


def test_secrets_never_reach_errors_or_logs(server: ScriptedServer, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    echo = f"bad key {SECRETS['header']} / {SECRETS['query']}".encode()
    server.route("/api", Reply(503, echo))  # a server that echoes the key back
    server.route("/denied", Reply(401, echo))
    errors = []
    with client(max_retries=2) as c:
        for path in ("/api", "/denied"):
            with pytest.raises(FetchError) as info:
                c.fetch(secret_request(server.url_for(path)))
            errors.append(info.value)
    assert [e.status for e in errors] == [503, 401]
    assert len(server.requests_for("/api")) == 3
    assert all(r.headers["x-api-key"] == SECRETS["header"] for r in server.requests)
    assert "bad key" in str(errors[1])  # the useful part of the body survives
    assert any(r.levelno == logging.WARNING for r in caplog.records)  # retries were logged
    for err in errors:
        assert_no_secret(str(err), repr(err), err.url, repr(err.args))
        assert_no_secret(str(pickle.loads(pickle.dumps(err))))
        # no chained httpx exception (whose text we do not control) in a printed traceback
        assert err.__cause__ is None
        assert err.__context__ is None or err.__suppress_context__
    assert_no_secret(*log_texts(caplog))


def test_signed_redirect_target_is_redacted(server: ScriptedServer) -> None:
    signed = "/lfs/blob?X-Amz-Signature=deadbeefcafe1234&X-Amz-Expires=60"
    server.route("/dl", Reply(302, headers={"Location": signed}))
    server.route("/lfs/blob", Reply(200, b"blob"))
    with client() as c:
        result = c.fetch(server.url_for("/dl"))
    assert "deadbeefcafe1234" not in result.url
    assert f"X-Amz-Signature={REDACTED}" in result.url
    assert "X-Amz-Expires=60" in result.url


@pytest.mark.parametrize(
    ("url", "declared", "expected"),
    [
        (
            "https://h.example/v1?api_key=abc&page=2",
            (),
            f"https://h.example/v1?api_key={REDACTED}&page=2",
        ),
        ("https://h.example/?KEY=abc&q=a%20b", (), f"https://h.example/?KEY={REDACTED}&q=a%20b"),
        ("https://h.example/?sess=abc&x=1", ("sess",), f"https://h.example/?sess={REDACTED}&x=1"),
        (
            "https://h.example/?refresh_token=abc",
            (),
            f"https://h.example/?refresh_token={REDACTED}",
        ),
        ("https://u:pw@h.example/p", (), f"https://u:{REDACTED}@h.example/p"),
        (
            "https://h.example/cb#access_token=abc",
            (),
            f"https://h.example/cb#access_token={REDACTED}",
        ),
        ("https://h.example/p?page=1&limit=5", (), "https://h.example/p?page=1&limit=5"),
    ],
)
def test_redact_url(url: str, declared: tuple[str, ...], expected: str) -> None:
    assert redact_url(url, declared) == expected


@given(
    secret=st.text(
        alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")),
        min_size=3,
        max_size=40,
    ),
    prefix=st.text(max_size=30),
)
def test_redact_text_removes_declared_secret(secret: str, prefix: str) -> None:
    text = f"{prefix}GET https://h.example/p?x={secret} failed: {secret}"
    # markers become a character the secret cannot contain, so no occurrence is made up
    assert secret not in redact_text(text, {secret}).replace(REDACTED, "\x00")


# --------------------------------------------------------------------------------------------
# local files and bad URLs


def test_plain_path_and_file_url_look_like_http_200(tmp_path: Path) -> None:
    payload = tmp_path / "board.json"
    payload.write_bytes(b'{"rows": []}')
    with client() as c:
        by_path = c.fetch(str(payload))
        by_url = c.fetch(FetchRequest(url=payload.as_uri(), label="local"))
    for result in (by_path, by_url):
        assert result.status == 200
        assert result.body == b'{"rows": []}'
        assert result.content_type == "application/json"
        assert result.url == payload.resolve().as_uri()
        assert result.attempts == 1
        assert result.not_modified is False
    assert by_url.label == "local"


def test_local_csv_content_type_and_missing_file(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_bytes(b"a\n1\n")
    with client() as c:
        assert c.fetch(str(tmp_path / "t.csv")).content_type == "text/csv"
        with pytest.raises(FetchError) as info:
            c.fetch(str(tmp_path / "missing.json"))
    assert (info.value.kind, info.value.status) == ("http_status", 404)


def test_local_file_over_max_bytes(tmp_path: Path) -> None:
    (tmp_path / "big.bin").write_bytes(b"z" * 2048)
    with client(max_bytes=1024) as c, pytest.raises(FetchError) as info:
        c.fetch(str(tmp_path / "big.bin"))
    assert info.value.kind == "too_large"


@pytest.mark.parametrize("url", ["ftp://example.org/x.csv", "s3://bucket/key", "http://"])
def test_unsupported_or_malformed_url(url: str) -> None:
    with client() as c, pytest.raises(FetchError) as info:
        c.fetch(url)
    assert info.value.kind == "invalid_url"
    assert info.value.attempts <= 1


def test_invalid_client_options() -> None:
    with pytest.raises(ValueError, match="max_retries"):
        HttpClient(max_retries=-1)
    with pytest.raises(ValueError, match="max_bytes"):
        HttpClient(max_bytes=0)


def test_post_sends_its_json_body_and_records_it(server: ScriptedServer) -> None:
    server.route("/functions/v1/read", Reply(503), Reply(200, b'{"rows": []}'))
    request = FetchRequest.post_json(
        server.url_for("/functions/v1/read"), {"package": "org/pkg", "name": "2-0"}, label="board:2-0"
    )
    sleeps = Sleeps()
    with client(sleeps) as c:
        result = c.fetch(request)
    first, second = server.requests_for("/functions/v1/read")
    assert (first.method, second.method) == ("POST", "POST")  # a retried POST is posted again
    assert json.loads(second.body) == {"package": "org/pkg", "name": "2-0"}
    assert second.headers["content-type"] == "application/json"
    assert result.body == b'{"rows": []}' and result.attempts == 2 and len(sleeps) == 1
    assert result.request_params["method"] == "POST"
    assert json.loads(result.request_params["body"]) == {"package": "org/pkg", "name": "2-0"}
    assert "POST" in repr(request)


def test_post_keeps_its_body_through_307_and_becomes_a_get_after_303(server: ScriptedServer) -> None:
    server.route("/a", Reply(307, headers={"Location": "/b"}))
    server.route("/b", Reply(200, b"b"))
    server.route("/c", Reply(303, headers={"Location": "/d"}))
    server.route("/d", Reply(200, b"d"))
    with client() as c:
        kept = c.fetch(FetchRequest.post_json(server.url_for("/a"), {"q": 1}))
        turned = c.fetch(FetchRequest.post_json(server.url_for("/c"), {"q": 2}))
    (b,) = server.requests_for("/b")
    (d,) = server.requests_for("/d")
    assert (kept.body, b.method, json.loads(b.body)) == (b"b", "POST", {"q": 1})
    assert (turned.body, d.method, d.body) == (b"d", "GET", b"")


def test_post_failure_names_the_method(server: ScriptedServer) -> None:
    server.route("/read", Reply(400, b'{"error": {"message": "unknown leaderboard"}}'))
    with client() as c, pytest.raises(FetchError) as info:
        c.fetch(FetchRequest.post_json(server.url_for("/read"), {"name": "nope"}))
    assert info.value.message.startswith("POST ") and "unknown leaderboard" in info.value.message
    assert info.value.status == 400 and info.value.attempts == 1


def test_a_post_is_never_conditional() -> None:
    with pytest.raises(ValueError, match="never conditional"):
        FetchRequest(url="https://h.example/read", body=b"{}", etag='"x"')
    assert FetchRequest(url="https://h.example/read").method == "GET"
