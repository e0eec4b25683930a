import base64
import re
from dataclasses import replace

import pytest

from service.lti import registration
from service.web import create_app, extensions

GOOD = {
    "name": "Our Moodle",
    "issuer": "https://moodle.example.org",
    "client_id": "AbC123",
    "deployment_ids": "1, 2",
    "auth_login_url": "https://moodle.example.org/mod/lti/auth.php",
    "auth_token_url": "https://moodle.example.org/mod/lti/token.php",
    "key_set_url": "https://moodle.example.org/mod/lti/certs.php",
}


def basic(password, user="admin"):
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


@pytest.fixture
def admin_app(settings):
    app = create_app({"TESTING": True, "SETTINGS": replace(settings, admin_password="s3cret")})
    yield app
    extensions.store(app).dispose()


def csrf_of(page):
    return re.search(r'name="csrf" value="([^"]+)"', page).group(1)


def test_the_page_is_off_without_a_password(client):
    assert client.get("/admin/platforms").status_code == 404


@pytest.mark.parametrize("headers", [{}, basic("wrong"), basic("s3cret", user="root")])
def test_the_page_needs_the_password(admin_app, headers):
    response = admin_app.test_client().get("/admin/platforms", headers=headers)
    assert response.status_code == 401 and "Basic" in response.headers["WWW-Authenticate"]


def test_add_list_and_remove(admin_app):
    client = admin_app.test_client()
    page = client.get("/admin/platforms", headers=basic("s3cret"))
    assert page.status_code == 200 and "No platform is registered yet" in page.text
    token = csrf_of(page.text)
    added = client.post("/admin/platforms", data={**GOOD, "csrf": token}, headers=basic("s3cret"))
    assert added.status_code == 303
    [platform] = registration.list_platforms(extensions.store(admin_app))
    assert platform.deployment_ids == ("1", "2") and platform.name == "Our Moodle"
    assert (
        "https://moodle.example.org" in client.get("/admin/platforms", headers=basic("s3cret")).text
    )
    bad = client.post(
        "/admin/platforms",
        data={**GOOD, "issuer": "http://x.example", "csrf": token},
        headers=basic("s3cret"),
    )
    assert bad.status_code == 400 and "https" in bad.text
    removed = client.post(
        f"/admin/platforms/{platform.id}/remove", data={"csrf": token}, headers=basic("s3cret")
    )
    assert removed.status_code == 303
    assert registration.list_platforms(extensions.store(admin_app)) == []


def test_the_token_audience_field_is_optional_and_kept(admin_app):
    client = admin_app.test_client()
    page = client.get("/admin/platforms", headers=basic("s3cret"))
    assert 'name="token_audience"' in page.text
    token = csrf_of(page.text)

    def add(**changes):
        data = {**GOOD, "csrf": token, **changes}
        return client.post("/admin/platforms", data=data, headers=basic("s3cret"))

    assert add(token_audience="  ").status_code == 303  # left empty: the token URL is the aud
    assert registration.list_platforms(extensions.store(admin_app))[0].token_audience is None
    bad = add(token_audience="ftp://aud.example", replace="on")
    assert bad.status_code == 400 and "token audience must be an https URL" in bad.text
    audience = "https://api.brightspace.com/auth/token"
    assert add(token_audience=audience, replace="on").status_code == 303
    [platform] = registration.list_platforms(extensions.store(admin_app))
    assert platform.token_audience == audience
    listed = client.get("/admin/platforms", headers=basic("s3cret")).text
    assert f"Token audience: <code>{audience}</code>" in listed


def test_forms_without_the_csrf_token_are_refused(admin_app):
    client = admin_app.test_client()
    refused = client.post("/admin/platforms", data=GOOD, headers=basic("s3cret"))
    assert refused.status_code == 400
    assert registration.list_platforms(extensions.store(admin_app)) == []


def test_password_guessing_is_throttled_per_client_and_per_account(admin_app):
    from service.web.admin import ACCOUNT_FAILURES, CLIENT_FAILURES

    client = admin_app.test_client()
    here = {"REMOTE_ADDR": "203.0.113.7"}
    for attempt in range(CLIENT_FAILURES):
        wrong = client.get("/admin/platforms", headers=basic(f"guess-{attempt}"), environ_base=here)
        assert wrong.status_code == 401
    # past the limit, even the right password waits: nothing is checked in the window
    blocked = client.get("/admin/platforms", headers=basic("s3cret"), environ_base=here)
    assert blocked.status_code == 429 and 1 <= int(blocked.headers["Retry-After"]) <= 15 * 60
    # another address is not blocked by this one's guesses
    other = client.get("/admin/platforms", headers=basic("s3cret"),
                       environ_base={"REMOTE_ADDR": "198.51.100.1"})  # fmt: skip
    assert other.status_code == 200
    # guesses spread over many addresses meet the account's own limit
    for attempt in range(ACCOUNT_FAILURES):
        spread = {"REMOTE_ADDR": f"10.1.{attempt // 250}.{attempt % 250}"}
        client.get("/admin/platforms", headers=basic(f"x{attempt}"), environ_base=spread)
    fresh = client.get("/admin/platforms", headers=basic("s3cret"),
                       environ_base={"REMOTE_ADDR": "192.0.2.99"})  # fmt: skip
    assert fresh.status_code == 429


def test_a_browsers_first_request_without_credentials_is_no_guess(admin_app):
    from service.web.admin import CLIENT_FAILURES

    client = admin_app.test_client()
    for _ in range(CLIENT_FAILURES * 2):
        assert client.get("/admin/platforms").status_code == 401
    assert client.get("/admin/platforms", headers=basic("s3cret")).status_code == 200


def test_the_admin_page_makes_a_registration_url(admin_app):
    client = admin_app.test_client()
    page = client.get("/admin/platforms", headers=basic("s3cret"))
    made = client.post(
        "/admin/platforms/register-url",
        data={"csrf": csrf_of(page.text), "name": "Moodle", "valid_hours": "48"},
        headers=basic("s3cret"),
    )
    assert made.status_code == 200
    url = re.search(r'id="made-url" readonly value="([^"]+)"', made.text).group(1)
    assert "/lti/register?token=" in url
    for hours in ("0", "²", "9" * 5000, "721"):
        bad = client.post(
            "/admin/platforms/register-url",
            data={"csrf": csrf_of(page.text), "valid_hours": hours},
            headers=basic("s3cret"),
        )
        assert bad.status_code == 400
    forged = client.post("/admin/platforms/register-url", data={}, headers=basic("s3cret"))
    assert forged.status_code == 400


def test_adding_a_known_platform_never_replaces_its_urls_unasked(admin_app):
    client = admin_app.test_client()
    token = csrf_of(client.get("/admin/platforms", headers=basic("s3cret")).text)
    post = {**GOOD, "csrf": token}
    assert client.post("/admin/platforms", data=post, headers=basic("s3cret")).status_code == 303
    changed = {**post, "key_set_url": "https://evil.example/jwks"}
    refused = client.post("/admin/platforms", data=changed, headers=basic("s3cret"))
    assert refused.status_code == 400 and "--replace" in refused.text
    [kept] = registration.list_platforms(extensions.store(admin_app))
    assert kept.key_set_url == GOOD["key_set_url"]
    # more deployments are no change of URLs
    more = {**post, "deployment_ids": "1, 2, 3"}
    assert client.post("/admin/platforms", data=more, headers=basic("s3cret")).status_code == 303
    replaced = {**changed, "replace": "on"}
    answer = client.post("/admin/platforms", data=replaced, headers=basic("s3cret"))
    assert answer.status_code == 303
    [now] = registration.list_platforms(extensions.store(admin_app))
    assert now.key_set_url == "https://evil.example/jwks" and now.deployment_ids == ("1", "2", "3")
