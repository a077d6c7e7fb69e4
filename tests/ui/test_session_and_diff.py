"""Pure pieces of the inspector: the signed session cookie, CSRF tokens, redirects, identity diffs."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

from hypothesis import given
from hypothesis import strategies as st

from api.ui import session as s
from api.ui.deps import safe_next
from api.ui.diff import diff_versions, word_diff

SECRET = b"unit-test-secret"
NOW = 1_800_000_000.0


def test_a_session_reads_back_until_it_expires() -> None:
    key = uuid.uuid4()
    value = s.issue_session(SECRET, key, NOW, 3600)
    found = s.read_session(SECRET, value, NOW + 3599)
    assert found is not None and found.key_id == key and found.expires == int(NOW + 3600)
    assert s.read_session(SECRET, value, NOW + 3600) is None
    assert s.issue_session(SECRET, key, NOW, 3600) != value  # a fresh nonce each sign-in


def test_forged_or_altered_sessions_are_refused() -> None:
    key = uuid.uuid4()
    value = s.issue_session(SECRET, key, NOW, 3600)
    payload, _, signature = value.rpartition(".")
    other = uuid.uuid4().hex
    assert s.read_session(b"another-secret", value, NOW) is None
    assert s.read_session(SECRET, value.replace(key.hex, other), NOW) is None
    longer = payload.replace(f".{int(NOW + 3600)}.", f".{int(NOW + 10**6)}.")
    assert s.read_session(SECRET, f"{longer}.{signature}", NOW) is None
    for junk in (None, "", ".", "a.b.c.d", "x" * 400, f"{payload}."):
        assert s.read_session(SECRET, junk, NOW) is None
    # a CSRF or sign-in token is never a valid session signature (each purpose has its own label)
    nonce = payload.split(".")[2]
    assert s.read_session(SECRET, f"{payload}.{s.csrf_token(SECRET, nonce)}", NOW) is None


def test_csrf_and_sign_in_tokens_bind_to_their_nonce() -> None:
    assert s.csrf_ok(SECRET, "n1", s.csrf_token(SECRET, "n1"))
    assert not s.csrf_ok(SECRET, "n2", s.csrf_token(SECRET, "n1"))
    assert not s.csrf_ok(SECRET, "n1", None) and not s.csrf_ok(SECRET, "n1", "")
    assert s.login_ok(SECRET, "n1", s.login_token(SECRET, "n1"))
    assert not s.login_ok(SECRET, None, s.login_token(SECRET, "n1"))
    assert not s.login_ok(SECRET, "n1", s.csrf_token(SECRET, "n1"))


def test_after_sign_in_only_inspector_paths_are_followed() -> None:
    assert safe_next("/ui/animas/x/pack?query=a") == "/ui/animas/x/pack?query=a"
    for bad in (None, "", "https://evil.example/ui", "//evil.example/ui", "/api/keys", "/ui\\..\\x", "/\\evil"):
        assert safe_next(bad) == "/ui/animas", bad


@given(st.text(max_size=80), st.text(max_size=80))
def test_a_word_diff_rebuilds_both_sides(old: str, new: str) -> None:
    runs = word_diff(old, new)
    assert "".join(t for op, t in runs if op != "add") == old
    assert "".join(t for op, t in runs if op != "del") == new


def test_identity_diff_names_changed_fields() -> None:
    def version(**kw):  # type: ignore[no-untyped-def]
        base = {"personality_type": "Steady", "communication_style": "concise", "prose": "I listen.", "self": {"a": 1}}
        return SimpleNamespace(**(base | kw))

    diff = {d.field: d for d in diff_versions(version(), version(prose="I listen closely.", self={"a": 2}))}
    assert [f for f, d in diff.items() if d.changed] == ["prose", "self"]
    assert diff["prose"].runs == [("same", "I "), ("del", "listen."), ("add", "listen closely.")]
