"""Pure error mapping, retry decisions and pagination stepping."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from elephantasm_sdk import (
    APIConnectionError,
    APITimeoutError,
    AuthenticationError,
    ConflictError,
    ElephantasmError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    RateLimitError,
    RetryPolicy,
    ServerError,
    ValidationError,
)
from elephantasm_sdk._core.attempt import after_attempt
from elephantasm_sdk._core.pagination import Page, next_page
from elephantasm_sdk._core.request import RawResponse
from elephantasm_sdk._core.response import error_from_response
from elephantasm_sdk._core.retry import backoff_delay, next_delay, parse_retry_after
from elephantasm_sdk._core.routes import list_events

FIELD_ERRORS = [{"loc": ["body", "content"], "msg": "field required", "type": "missing"},
                {"key": "importance_score", "message": "must be <= 1"}]  # fmt: skip

ERROR_TABLE = [
    (400, "bad request", ElephantasmError),
    (401, "Invalid API key", AuthenticationError),
    (403, "this API key has scope 'read'", PermissionDeniedError),
    (418, "teapot", ElephantasmError),
    (404, "Anima not found", NotFoundError),
    (409, "A dream is already running for this anima", ConflictError),
    (413, "Event exceeds 262144 bytes", PayloadTooLargeError),
    (422, FIELD_ERRORS, ValidationError),
    (422, "name must not be blank", ValidationError),
    (429, "Too many requests", RateLimitError),
    (500, "Internal server error", ServerError),
    (502, "Bad gateway", ServerError),
    (503, "Service unavailable", ServerError),
    (504, "Gateway timeout", ServerError),
]


def _raw(status: int, body: object, headers: dict[str, str] | None = None) -> RawResponse:
    return RawResponse(status, headers or {}, json.dumps(body).encode())


@pytest.mark.parametrize(("status", "detail", "cls"), ERROR_TABLE)
def test_error_table_carries_status_and_detail(status: int, detail: object, cls: type) -> None:
    err = error_from_response(_raw(status, {"detail": detail}))
    assert type(err) is cls and isinstance(err, ElephantasmError)
    assert err.status_code == status and err.detail == detail
    if isinstance(detail, str):
        assert err.message == detail == str(err)
    else:
        assert err.message == "body.content: field required; importance_score: must be <= 1"


def test_error_without_json_body_falls_back_to_text() -> None:
    assert error_from_response(RawResponse(502, {}, b"<html>bad gateway</html>")).detail == "<html>bad gateway</html>"
    assert error_from_response(RawResponse(500, {}, b"")).detail == "HTTP 500"
    assert error_from_response(_raw(404, {"error": "x"})).detail == '{"error": "x"}'


def test_exceptions_keep_the_020_constructors() -> None:
    assert AuthenticationError().status_code == 401 and AuthenticationError("nope").message == "nope"
    assert ElephantasmError("boom", status_code=418).status_code == 418
    err = RateLimitError("slow down", 429, headers={"Retry-After": "3"})
    assert err.retry_after == 3.0


def test_backoff_grows_caps_and_jitters() -> None:
    policy = RetryPolicy(max_retries=10, initial_delay=0.5, max_delay=4.0, jitter=0.25)
    assert [backoff_delay(policy, n, rand=0.0) for n in range(5)] == [0.5, 1.0, 2.0, 4.0, 4.0]
    assert backoff_delay(policy, 1, rand=0.999) == pytest.approx(0.75, abs=1e-3)


def test_next_delay_decisions() -> None:
    policy = RetryPolicy(max_retries=2, initial_delay=1.0, jitter=0.0, max_retry_after=30)
    assert next_delay(policy, 0, rand=0, status=503) == 1.0
    assert next_delay(policy, 1, rand=0, status=500) == 2.0
    assert next_delay(policy, 2, rand=0, status=500) is None  # bounded
    assert next_delay(policy, 0, rand=0, status=429, retry_after=7) == 7
    assert next_delay(policy, 0, rand=0, status=429, retry_after=31) is None  # too long to wait
    for status in (400, 401, 404, 409, 413, 422):
        assert next_delay(policy, 0, rand=0, status=status) is None
    assert next_delay(policy, 0, rand=0, exc=httpx.ConnectError("refused")) == 1.0
    assert next_delay(policy, 0, rand=0, exc=httpx.ReadTimeout("slow")) == 1.0
    assert next_delay(policy, 0, rand=0, exc=httpx.UnsupportedProtocol("ftp")) is None
    assert next_delay(RetryPolicy(max_retries=0), 0, rand=0, status=503) is None


def test_parse_retry_after_forms() -> None:
    now = datetime(2025, 1, 1, tzinfo=UTC)
    assert parse_retry_after("5") == 5.0 and parse_retry_after("0.5") == 0.5 and parse_retry_after("-3") == 0.0
    date = (now + timedelta(seconds=12)).strftime("%a, %d %b %Y %H:%M:%S GMT")
    assert parse_retry_after(date, now=now) == 12.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None


def test_after_attempt_outcomes() -> None:
    policy = RetryPolicy(max_retries=1, initial_delay=0.1, jitter=0)
    assert after_attempt(policy, 0, rand=0, raw=RawResponse(200, {}, b"{}")).retry_in is None
    assert after_attempt(policy, 0, rand=0, raw=RawResponse(304, {}, b"")).error is None
    assert after_attempt(policy, 0, rand=0, raw=_raw(429, {"detail": "x"}, {"retry-after": "2"})).retry_in == 2.0
    final = after_attempt(policy, 1, rand=0, raw=_raw(503, {"detail": "down"}))
    assert isinstance(final.error, ServerError) and final.error.detail == "down"
    conn = after_attempt(policy, 1, rand=0, exc=httpx.ConnectError("refused"))
    assert type(conn.error) is APIConnectionError
    assert type(after_attempt(policy, 1, rand=0, exc=httpx.ReadTimeout("t")).error) is APITimeoutError


def test_next_page_stepping() -> None:
    op = list_events("a", limit=2)
    assert next_page(op, Page(items=[1, 2], next_cursor=None)) is None
    assert next_page(op, Page(items=[], next_cursor="c")) is None
    second = next_page(op, Page(items=[1, 2], next_cursor="c2"))
    assert second is not None and second.request.params == {"anima_id": "a", "limit": "2", "cursor": "c2"}
    assert next_page(second, Page(items=[3], next_cursor="c2")) is None  # a repeating cursor ends the walk
