import base64
import re
from dataclasses import replace

import pytest

from service import create_app
from service.lti import registration

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
    app.extensions["store"].dispose()


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
    [platform] = registration.list_platforms(admin_app.extensions["store"])
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
    assert registration.list_platforms(admin_app.extensions["store"]) == []


def test_forms_without_the_csrf_token_are_refused(admin_app):
    client = admin_app.test_client()
    refused = client.post("/admin/platforms", data=GOOD, headers=basic("s3cret"))
    assert refused.status_code == 400
    assert registration.list_platforms(admin_app.extensions["store"]) == []
