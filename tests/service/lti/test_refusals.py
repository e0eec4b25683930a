"""Invalid launches over real HTTP: each refused with a page saying what to check, a log line,
and nothing stored. Tokens are signed by the real platform and tampered where a test says."""

import logging
import time
from dataclasses import replace
from urllib.parse import parse_qsl, urlsplit

import pytest
import requests

from demo.browser import run_launch
from testkit.lms import make_lms

LTI = "https://purl.imsglobal.org/spec/lti/claim/"
DL = "https://purl.imsglobal.org/spec/lti-dl/claim/"
NOW = int(time.time())


def claim(name, value):
    def mutate(claims):
        if value is None:
            claims.pop(name, None)
        else:
            claims[name] = value(claims) if callable(value) else value

    return mutate


def several(*mutations):
    def mutate(claims):
        for m in mutations:
            m(claims)

    return mutate


def tamper_signature(form):
    head, body, signature = form.fields["id_token"].split(".")
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
    return replace(form, fields={**form.fields, "id_token": f"{head}.{body}.{flipped}"})


# (case, how to make the token: dict of authorize() arguments, or a form rewrite, and the
# title on the refusal page)
CASES = [
    ("bad signature", {"rewrite": tamper_signature}, "Invalid id_token"),
    ("unknown kid", {"headers": {"kid": "not-a-kid"}}, "Unknown key"),
    ("missing kid", {"headers": {"kid": ""}}, "Missing kid"),
    ("alg none", {"algorithm": "none"}, "Refused algorithm"),
    ("alg HS256", {"algorithm": "HS256"}, "Refused algorithm"),
    (
        "expired",
        {"mutate": several(claim("iat", NOW - 900), claim("exp", NOW - 300))},
        "Expired launch",
    ),
    ("missing exp", {"mutate": claim("exp", None)}, "Invalid id_token"),
    ("missing iat", {"mutate": claim("iat", None)}, "Invalid id_token"),
    (
        "iat in the future",
        {"mutate": several(claim("iat", NOW + 3600), claim("exp", NOW + 7200))},
        "Launch from the future",
    ),
    ("wrong iss", {"mutate": claim("iss", "https://evil.example.org")}, "Wrong issuer"),
    ("wrong aud", {"mutate": claim("aud", "someone-else")}, "Invalid id_token"),
    (
        "wrong aud and azp",
        {"mutate": several(claim("aud", "someone-else"), claim("azp", "someone-else"))},
        "Wrong client id",
    ),
    (
        "aud list without azp",
        {"mutate": several(claim("aud", lambda c: [c["aud"], "other"]), claim("azp", None))},
        "No client id",
    ),
    (
        "wrong azp",
        {"mutate": several(claim("aud", lambda c: [c["aud"], "other"]), claim("azp", "other"))},
        "Wrong client id",
    ),
    ("wrong nonce", {"mutate": claim("nonce", "not-the-nonce")}, "Wrong nonce"),
    ("missing nonce", {"mutate": claim("nonce", None)}, "Invalid id_token"),
    (
        "unknown deployment",
        {"mutate": claim(LTI + "deployment_id", "9:unknown")},
        "Unknown deployment",
    ),
    ("wrong version", {"mutate": claim(LTI + "version", "1.1.0")}, "Unsupported LTI version"),
    (
        "wrong message type",
        {"mutate": claim(LTI + "message_type", "LtiDataPrivacyLaunchRequest")},
        "Unsupported message type",
    ),
    ("missing roles", {"mutate": claim(LTI + "roles", None)}, "Missing roles"),
    ("missing sub", {"mutate": claim("sub", None)}, "Missing sub"),
    (
        "missing resource link",
        {"mutate": claim(LTI + "resource_link", None)},
        "Missing resource link",
    ),
    (
        "foreign target_link_uri",
        {"mutate": claim(LTI + "target_link_uri", "https://evil.example.org/lti/launch")},
        "Foreign target_link_uri",
    ),
    ("oversized sub", {"mutate": claim("sub", "s" * 300)}, "Oversized sub"),
    (
        "oversized deployment id",
        {"mutate": claim(LTI + "deployment_id", "d" * 300)},
        "Oversized deployment_id",
    ),
    (
        "oversized context id",
        {"mutate": claim(LTI + "context", {"id": "c" * 300})},
        "Oversized context.id",
    ),
    ("oversized name", {"mutate": claim("name", "n" * 5000)}, "Oversized claim"),
    (
        "state mismatch",
        {"rewrite": lambda f: replace(f, fields={**f.fields, "state": "forged"})},
        "Unknown or used state",
    ),
    (
        "missing state",
        {"rewrite": lambda f: replace(f, fields={"id_token": f.fields["id_token"]})},
        "Missing state",
    ),
    (
        "missing id_token",
        {"rewrite": lambda f: replace(f, fields={"state": f.fields["state"]})},
        "Missing id_token",
    ),
    (
        "garbage id_token",
        {"rewrite": lambda f: replace(f, fields={**f.fields, "id_token": "x.y.z"})},
        "Malformed id_token",
    ),
]


def tampered_launch(lms, browser, link_id, who="ali", deep=False, **how):
    rewrite = how.pop("rewrite", None)

    def authorize(params):
        form = lms.platform.authorize(params, **how)
        return rewrite(form) if rewrite else form

    initiation = (
        lms.platform.deep_link(who, lms.client_id) if deep else lms.platform.launch(who, link_id)
    )
    return run_launch(browser, initiation, authorize=authorize)


def assert_refused(lms, response, title, caplog):
    assert 400 <= response.status_code < 500, (response.status_code, response.text[:300])
    assert title in response.text
    assert "What to check" in response.text
    assert any(
        "launch refused" in r.getMessage() and title in r.getMessage() for r in caplog.records
    ), [r.getMessage() for r in caplog.records]
    assert lms.counts() == (0, 0, 0, 0)


@pytest.mark.parametrize(("case", "how", "title"), CASES, ids=[c[0] for c in CASES])
def test_invalid_launch_is_refused(lms, browser, caplog, case, how, title):
    caplog.set_level(logging.WARNING, logger="codeblanks.lti")
    link = lms.link()
    trace = tampered_launch(lms, browser, link.id, **dict(how))
    assert_refused(lms, trace.launch, title, caplog)


def test_thirty_seconds_of_clock_skew_are_accepted(lms, browser):
    link = lms.link()
    skewed = several(claim("iat", lambda c: c["iat"] + 30), claim("exp", lambda c: c["exp"] + 30))
    trace = tampered_launch(lms, browser, link.id, mutate=skewed)
    assert trace.launch.status_code == 302


def test_deep_linking_request_without_return_url_is_refused(lms, browser, caplog):
    caplog.set_level(logging.WARNING, logger="codeblanks.lti")

    def no_return(claims):
        settings = dict(claims[DL + "deep_linking_settings"])
        settings.pop("deep_link_return_url")
        claims[DL + "deep_linking_settings"] = settings

    trace = tampered_launch(lms, browser, None, who="ada", deep=True, mutate=no_return)
    assert_refused(lms, trace.launch, "Missing return URL", caplog)


def test_replay_in_the_same_browser_and_a_fresh_one(lms, browser, caplog):
    caplog.set_level(logging.WARNING, logger="codeblanks.lti")
    trace = run_launch(browser, lms.platform.launch("ali", lms.link().id))
    assert trace.launch.status_code == 302
    stored = lms.counts()
    again = browser.post(trace.form.action, data=trace.form.fields, allow_redirects=False)
    assert again.status_code == 403 and "Unknown or used state" in again.text
    with requests.Session() as stranger:
        stolen = stranger.post(trace.form.action, data=trace.form.fields, allow_redirects=False)
    assert stolen.status_code == 403
    assert lms.counts() == stored


def test_a_token_of_another_registration_is_refused_with_this_logins_state(lms, browser, caplog):
    caplog.set_level(logging.WARNING, logger="codeblanks.lti")
    other = lms.platform.register_tool(
        name="Other",
        login_url=lms.tool_url + "/lti/login",
        launch_url=lms.tool_url + "/lti/launch",
        jwks_url=lms.tool_url + "/lti/jwks",
    )
    trace = tampered_launch(
        lms,
        browser,
        lms.link().id,
        mutate=several(
            claim("aud", other.client_id),
            claim("azp", other.client_id),
            claim(LTI + "deployment_id", other.deployment_id),
        ),
    )
    assert_refused(lms, trace.launch, "Wrong client id", caplog)


def test_a_launch_from_another_browser_is_not_taken(lms, browser):
    link = lms.link()
    initiation = lms.platform.launch("ali", link.id)
    login = browser.get(initiation.url, allow_redirects=False)
    auth = browser.get(login.headers["Location"])
    from demo.browser import parse_form

    form = parse_form(auth.text, auth.url)
    with requests.Session() as other:  # has no login cookie: third-party cookies blocked
        page = other.post(form.action, data=form.fields, allow_redirects=False)
    assert page.status_code == 200 and "Open the activity in a new window" in page.text
    assert lms.counts() == (0, 0, 0, 0)
    import re

    relaunch = re.search(r'href="([^"]*/lti/login\?[^"]*)"', page.text).group(1)
    relaunch = relaunch.replace("&amp;", "&")
    assert (
        dict(parse_qsl(urlsplit(relaunch).query))["login_hint"] == initiation.params["login_hint"]
    )
    # the same browser, which has the cookie, still completes the launch
    done = browser.post(form.action, data=form.fields, allow_redirects=False)
    assert done.status_code == 302


def test_platform_storage_carries_the_browser_binding(tmp_path):
    from demo.browser import parse_form

    lms, server = make_lms(tmp_path, storage_target="_parent")
    try:
        initiation = lms.platform.launch("ali", lms.link().id)
        with requests.Session() as frame:
            login = frame.get(initiation.url, allow_redirects=False)
            assert login.status_code == 200 and "lti.put_data" in login.text
            import re

            value = re.search(r'value: "([^"]+)"', login.text).group(1)
            auth_url = re.search(r'window.location.href = "([^"]+)"', login.text).group(1)
            frame.cookies.clear()  # the iframe may not keep cookies
            form = parse_form(frame.get(auth_url.encode().decode("unicode_escape")).text)
            page = frame.post(form.action, data=form.fields, allow_redirects=False)
            assert page.status_code == 200 and "lti.get_data" in page.text
            assert lms.counts() == (0, 0, 0, 0)
            done = frame.post(
                form.action, data={**form.fields, "browser_token": value}, allow_redirects=False
            )
            assert done.status_code == 302 and "/lessons/" in done.headers["Location"]
            forged = frame.post(
                form.action, data={**form.fields, "browser_token": "x"}, allow_redirects=False
            )
            assert forged.status_code == 403
    finally:
        lms.demo.stop()
        server.stop()


@pytest.mark.parametrize(
    ("params", "title"),
    [
        ({"iss": "https://unknown.example.org"}, "Unknown platform"),
        ({"target_link_uri": "https://evil.example.org/x"}, "Foreign target_link_uri"),
        ({"login_hint": ""}, "Incomplete login"),
    ],
)
def test_bad_logins_are_refused(lms, browser, caplog, params, title):
    caplog.set_level(logging.WARNING, logger="codeblanks.lti")
    initiation = lms.platform.launch("ali", lms.link().id)
    response = browser.get(
        lms.tool_url + "/lti/login", params={**initiation.params, **params}, allow_redirects=False
    )
    assert response.status_code == 400 and title in response.text
    assert lms.counts() == (0, 0, 0, 0)


def test_a_flood_of_junk_logins_stores_only_bounded_known_parameters(lms, browser):
    from sqlalchemy import select

    from service.store.models import LtiLogin

    initiation = lms.platform.launch("ali", lms.link().id)
    url = lms.tool_url + "/lti/login"
    for n in range(20):  # a megabyte of junk each: refused unread
        junk = browser.post(url, data={**initiation.params, "junk": "x" * 1024 * 1024})
        assert junk.status_code == 413, n
    under_the_cap = browser.post(url, data={**initiation.params, "junk": "y" * 60_000},
                                 allow_redirects=False)  # fmt: skip
    assert under_the_cap.status_code == 302
    oversized = browser.post(url, data={**initiation.params, "login_hint": "z" * 3000},
                             allow_redirects=False)  # fmt: skip
    assert oversized.status_code == 400 and "Oversized login parameter" in oversized.text
    with lms.store.session() as session:
        stored = [login.params for login in session.scalars(select(LtiLogin))]
    assert len(stored) == 1
    assert set(stored[0]) <= {"iss", "login_hint", "target_link_uri", "lti_message_hint",
                              "client_id", "lti_deployment_id", "lti_storage_target"}  # fmt: skip
    assert len(str(stored[0])) < 10_000
