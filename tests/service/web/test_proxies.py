"""X-Forwarded-For and -Proto: believed from the trusted proxy (loopback by default), dropped
from anyone else, so that a client cannot pick its own address or scheme."""

from __future__ import annotations

from dataclasses import replace

import pytest
from flask import request

from service.web import create_app, extensions
from service.web.admin import CLIENT_FAILURES
from service.web.proxies import networks

FORWARDED = {"X-Forwarded-For": "6.6.6.6, 203.0.113.7", "X-Forwarded-Proto": "https"}
STRANGER = {"REMOTE_ADDR": "198.51.100.9"}


@pytest.fixture
def peer(app):
    """The app with a page that says whom and how it was asked."""

    def whom() -> dict[str, object]:
        seen = "HTTP_X_FORWARDED_FOR" in request.environ
        return {"addr": request.remote_addr, "scheme": request.scheme, "header": seen}

    app.add_url_rule("/test-peer", view_func=whom)
    return app.test_client()


def test_the_proxy_tells_the_client_address_and_scheme(peer):
    # the last hop only: what the client wrote before the proxy's own entry is its say-so
    seen = peer.get("/test-peer", headers=FORWARDED).get_json()
    assert seen == {"addr": "203.0.113.7", "scheme": "https", "header": True}


def test_anyone_else_s_forwarded_headers_are_dropped(peer):
    seen = peer.get("/test-peer", headers=FORWARDED, environ_base=STRANGER).get_json()
    assert seen == {"addr": "198.51.100.9", "scheme": "http", "header": False}


def test_no_trusted_proxy_believes_no_one(settings):
    app = create_app({"TESTING": True, "SETTINGS": replace(settings, trusted_proxies="")})
    app.add_url_rule("/test-peer", view_func=lambda: {"addr": request.remote_addr})
    try:
        assert app.test_client().get("/test-peer", headers=FORWARDED).get_json() == {
            "addr": "127.0.0.1"
        }
    finally:
        extensions.store(app).dispose()


def _guess(client, forwarded_for: str, environ: dict[str, str] | None = None) -> int:
    return client.get(
        "/admin/platforms",
        headers={"X-Forwarded-For": forwarded_for, "Authorization": "Basic YWRtaW46bm8="},
        environ_base=environ or {},
    ).status_code


def test_the_admin_page_counts_wrong_passwords_per_client_behind_the_proxy(settings):
    app = create_app({"TESTING": True, "SETTINGS": replace(settings, admin_password="s3cret")})
    client = app.test_client()
    try:
        # behind the proxy: one guesser is throttled, another client is not
        assert [_guess(client, "203.0.113.7") for _ in range(CLIENT_FAILURES)] == [401] * 10
        assert _guess(client, "203.0.113.7") == 429
        assert _guess(client, "203.0.113.8") == 401
        # a stranger who writes a new address each time is still one client
        made_up = [_guess(client, f"192.0.2.{n}", STRANGER) for n in range(CLIENT_FAILURES + 1)]
        assert made_up == [401] * CLIENT_FAILURES + [429]
    finally:
        extensions.store(app).dispose()


@pytest.mark.parametrize("text", ["nginx", "10.0.0.0/40", "127.0.0.1:80"])
def test_a_bad_trusted_proxy_is_named(text):
    with pytest.raises(ValueError, match=f"CODEBLANKS_TRUSTED_PROXIES: '{text}'"):
        networks(f"127.0.0.1, {text}")
