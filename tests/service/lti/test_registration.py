"""Dynamic registration, as an attacker and as an admin would try it, over real HTTP."""

import html
import logging
import re
import threading
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from flask import Flask, jsonify, redirect, request
from sqlalchemy import func, select, update

from demo.browser import run_launch
from demo.server import BackgroundServer
from service.lti import registration
from service.store import registration_tokens
from service.store.models import Platform, RegistrationToken, utcnow
from service.web import extensions
from testkit.lms import make_lms
from tests.service.lti.test_flows import SEED


class FakePlatform:
    """An LMS's configuration and registration endpoints whose answers a test decides."""

    def __init__(self) -> None:
        self.hits: list[str] = []
        self.server = BackgroundServer()
        self.url = self.server.url
        self.issuer = self.url
        self.client_id = "fake-client"
        self.jwks_uri = self.url + "/jwks"
        self.registration_endpoint = self.url + "/register"
        self.register_answer: tuple | None = None
        self.config_answer: tuple | None = None
        self.platform_config: dict = {"product_family_code": "moodle", "version": "4.5"}
        self.more_config: dict = {}  # more keys of its configuration (authorization_server)
        app = Flask(__name__)

        @app.get("/.well-known/openid-configuration")
        def configuration():
            self.hits.append("configuration")
            if self.config_answer is not None:
                return self.config_answer
            return jsonify(
                issuer=self.issuer,
                authorization_endpoint=self.url + "/auth",
                token_endpoint=self.url + "/token",
                jwks_uri=self.jwks_uri,
                registration_endpoint=self.registration_endpoint,
                **{registration.PLATFORM_CONFIG: self.platform_config},
                **self.more_config,
            )

        @app.post("/register")
        def register():
            self.hits.append("register")
            if self.register_answer is not None:
                return self.register_answer
            return jsonify(client_id=self.client_id, **{registration.TOOL_CONFIG: {
                "deployment_id": "dep-1"}})  # fmt: skip

        @app.get("/elsewhere")
        def elsewhere():
            return redirect(request.args["to"])

        self.server.mount(app)
        self.server.start()

    @property
    def config_url(self) -> str:
        return self.url + "/.well-known/openid-configuration"


class Internal:
    """A service inside the network that nobody outside may read: it notes every visit."""

    def __init__(self) -> None:
        self.visits = 0
        app = Flask(__name__)

        @app.route("/", defaults={"path": ""}, methods=["GET", "POST"])
        @app.route("/<path:path>", methods=["GET", "POST"])
        def answer(path):
            self.visits += 1
            return "INTERNAL-SECRET-7d1f", 200

        self.server = BackgroundServer(app)
        self.url = self.server.url
        self.server.start()


@pytest.fixture
def setup(tmp_path):
    fake = FakePlatform()
    internal = Internal()
    # the fake LMS is on loopback too: allow it (and the demo LMS), never the internal one
    lms, tool_server = make_lms(tmp_path, allow=urlsplit(fake.url).netloc)
    yield lms, fake, internal
    fake.server.stop()
    internal.server.stop()
    lms.demo.stop()
    tool_server.stop()
    lms.store.dispose()


def token_url(lms, **options) -> str:
    return registration.registration_url(lms.store, lms.tool_url, now=utcnow(), **options)


def register(lms, fake, url=None, **query):
    params = {"openid_configuration": fake.config_url, "registration_token": "lms-token", **query}
    return requests.get(url or lms.tool_url + "/lti/register", params=params, timeout=30)


def platforms(lms):
    with lms.store.session() as session:
        return session.scalar(select(func.count()).select_from(Platform))


@pytest.mark.parametrize("token", [None, "", "made-up", "x" * 500])
def test_registration_without_a_valid_token_stores_and_fetches_nothing(setup, token):
    lms, fake, _ = setup
    before = platforms(lms)
    query = {} if token is None else {"token": token}
    page = register(lms, fake, **query)
    assert page.status_code == 403
    assert "registration URL" in page.text and "codeblanks platforms register-url" in page.text
    assert "launch" not in page.text.lower()  # registration speaks of registration
    assert fake.hits == [] and platforms(lms) == before


def test_a_registration_url_works_once(setup, caplog):
    caplog.set_level(logging.INFO, logger="codeblanks.lti")  # as in production
    lms, fake, _ = setup
    url = token_url(lms, name="Our Moodle")
    assert urlsplit(url).path == "/lti/register" and "token=" in url
    page = register(lms, fake, url=url)
    assert page.status_code == 200 and "org.imsglobal.lti.close" in page.text
    made = [p for p in registration.list_platforms(lms.store) if p.issuer == fake.url]
    assert [(p.name, p.client_id, p.deployment_ids) for p in made] == [
        ("Our Moodle", "fake-client", ("dep-1",))
    ]
    assert any(r.message == "platform registered" for r in caplog.records)
    fake.hits.clear()
    again = register(lms, fake, url=url)
    assert again.status_code == 403 and "used already" in again.text
    assert fake.hits == []


def test_an_expired_registration_url_is_refused(setup):
    lms, fake, _ = setup
    url = token_url(lms, valid_hours=1)
    with lms.store.session() as session:
        row = session.scalar(select(RegistrationToken))
        row.expires_at = utcnow() - timedelta(seconds=1)
    page = register(lms, fake, url=url)
    assert page.status_code == 403 and "expired" in page.text and fake.hits == []


def test_a_failed_registration_gives_its_url_back(setup):
    lms, fake, _ = setup
    url = token_url(lms)
    fake.register_answer = ("overloaded", 503)
    assert register(lms, fake, url=url).status_code == 502
    fake.register_answer = None
    assert register(lms, fake, url=url).status_code == 200


def test_one_url_cannot_register_twice_at_once(setup):
    lms, fake, _ = setup
    url = token_url(lms)
    token = parse_qs(urlsplit(url).query)["token"][0]
    grant = registration_tokens.claim(lms.store, token, utcnow())  # one registration in flight
    page = register(lms, fake, url=url)
    assert page.status_code == 403 and "in progress" in page.text
    registration_tokens.release(lms.store, grant)


def test_the_demo_lms_keeps_the_tool_urls_query_like_moodle(setup):
    lms, _, _ = setup
    url = token_url(lms)
    started = lms.platform.start_registration(url)
    query = parse_qs(urlsplit(started).query)
    assert set(query) == {"token", "openid_configuration", "registration_token"}
    page = requests.get(started, timeout=30)
    assert page.status_code == 200, page.text[:300]
    assert len([p for p in registration.list_platforms(lms.store)]) == 2


def test_reregistering_never_overwrites_an_issuers_urls_silently(setup):
    lms, fake, _ = setup
    assert register(lms, fake, url=token_url(lms)).status_code == 200
    [first] = [p for p in registration.list_platforms(lms.store) if p.issuer == fake.url]
    fake.jwks_uri = fake.url + "/other-jwks"  # the same client id, with another key set
    page = register(lms, fake, url=token_url(lms))
    assert page.status_code == 409 and f"register-url --replace {first.id}" in page.text
    [kept] = [p for p in registration.list_platforms(lms.store) if p.issuer == fake.url]
    assert kept.key_set_url == first.key_set_url
    # an admin who means it makes a URL for replacing that platform
    assert register(lms, fake, url=token_url(lms, replaces_id=first.id)).status_code == 200
    [replaced] = [p for p in registration.list_platforms(lms.store) if p.issuer == fake.url]
    assert replaced.id == first.id and replaced.key_set_url == fake.url + "/other-jwks"


def test_a_new_client_id_of_a_known_issuer_is_a_new_platform(setup):
    lms, fake, _ = setup
    assert register(lms, fake, url=token_url(lms)).status_code == 200
    fake.client_id = "second-client"
    assert register(lms, fake, url=token_url(lms)).status_code == 200
    found = {p.client_id for p in registration.list_platforms(lms.store) if p.issuer == fake.url}
    assert found == {"fake-client", "second-client"}


@pytest.mark.parametrize("where", ["registration_endpoint", "jwks_uri", "redirect"])
def test_registration_never_reaches_or_shows_an_internal_service(setup, where):
    lms, fake, internal = setup
    if where == "registration_endpoint":
        fake.registration_endpoint = internal.url + "/admin"
    elif where == "jwks_uri":
        fake.jwks_uri = internal.url + "/keys"
    else:
        fake.registration_endpoint = fake.url + "/elsewhere?to=" + internal.url + "/admin"
    page = register(lms, fake, url=token_url(lms))
    if where == "jwks_uri":
        # stored only as a URL to fetch keys from later; the key fetch is refused then
        assert page.status_code == 200
        key_sets = lms.lti.key_sets
        with pytest.raises(Exception, match="(?i)refused|not allowed|loopback"):
            key_sets.public_key(fake.jwks_uri, "kid", "RS256")
    else:
        assert page.status_code == 502
        assert "INTERNAL-SECRET" not in page.text
    assert internal.visits == 0


def test_the_platforms_answer_is_never_shown(setup):
    lms, fake, _ = setup
    fake.register_answer = ("<b>SECRET-BODY</b> of the upstream", 400)
    page = register(lms, fake, url=token_url(lms))
    assert page.status_code == 502 and "HTTP 400" in page.text
    assert "SECRET-BODY" not in page.text
    fake.register_answer = ('{"error": "no", "detail": "SECRET-JSON"}', 200,
                            {"Content-Type": "application/json"})  # fmt: skip
    page = register(lms, fake, url=token_url(lms))
    assert page.status_code == 502 and "SECRET-JSON" not in page.text


def test_registration_urls_from_the_cli_and_the_admin_page(setup, tmp_path, monkeypatch):
    lms, fake, _ = setup
    from click.testing import CliRunner

    from service.cli import main

    settings = extensions.settings(lms.app)
    monkeypatch.setenv("CODEBLANKS_INSTANCE_DIR", str(settings.instance_dir))
    monkeypatch.setenv("CODEBLANKS_DATABASE_URL", settings.database_url)
    monkeypatch.setenv("CODEBLANKS_BASE_URL", settings.base_url)
    result = CliRunner().invoke(main, ["platforms", "register-url", "--name", "Via CLI",
                                       "--valid-hours", "2"])  # fmt: skip
    assert result.exit_code == 0, result.output
    url = result.output.strip()
    assert re.fullmatch(re.escape(lms.tool_url) + r"/lti/register\?token=[\w-]{40,}", url)
    assert register(lms, fake, url=url).status_code == 200
    bad = CliRunner().invoke(main, ["platforms", "register-url", "--valid-hours", "0"])
    assert bad.exit_code == 2


def test_concurrent_registrations_with_one_url_store_one_platform(setup):
    lms, fake, _ = setup
    url = token_url(lms)
    codes = []

    def one():
        codes.append(register(lms, fake, url=url).status_code)

    threads = [threading.Thread(target=one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(codes).count(200) == 1
    assert len([p for p in registration.list_platforms(lms.store) if p.issuer == fake.url]) == 1


def test_a_canvas_school_names_the_shared_issuer_from_its_own_domain(setup):
    lms, fake, _ = setup
    fake.issuer = "https://canvas.instructure.com"
    assert register(lms, fake, url=token_url(lms)).status_code == 200
    [canvas] = [p for p in registration.list_platforms(lms.store) if p.issuer == fake.issuer]
    assert canvas.client_id == "fake-client" and canvas.key_set_url == fake.jwks_uri


@pytest.mark.parametrize("issuer", ["https://lms.elsewhere.example", "https://canvas.evil.example"])
def test_an_issuer_on_another_host_is_refused(setup, issuer):
    lms, fake, _ = setup
    fake.issuer = issuer
    page = register(lms, fake, url=token_url(lms))
    assert page.status_code == 400 and "Issuer mismatch" in page.text
    assert "register" not in fake.hits


CANVAS_SITE = "https://canvas.instructure.com/lti/account_name"


@pytest.mark.parametrize(
    ("admins", "platform_config", "named"),
    [
        # Moodle's configuration names its product, never its site: the host, not "moodle"
        ("", {"product_family_code": "moodle", "version": "4.5"}, "127.0.0.1"),
        ("", {}, "127.0.0.1"),
        ("", {"product_family_code": "canvas", CANVAS_SITE: " Fen Lisesi "}, "Fen Lisesi"),
        ("", {"product_family_code": "canvas", CANVAS_SITE: ["not", "a", "name"]}, "127.0.0.1"),
        ("Our Canvas", {"product_family_code": "canvas", CANVAS_SITE: "Fen Lisesi"}, "Our Canvas"),
    ],
)
def test_a_registered_platform_is_named_by_its_admin_its_site_or_its_host(
    setup, admins, platform_config, named
):
    lms, fake, _ = setup
    fake.platform_config = platform_config
    assert register(lms, fake, url=token_url(lms, name=admins)).status_code == 200
    [made] = [p for p in registration.list_platforms(lms.store) if p.issuer == fake.url]
    assert made.name == named


def test_a_launch_names_the_platform_by_its_site_unless_the_admin_did(setup):
    lms, _, _ = setup
    with lms.store.session() as session:  # as dynamic registration named Moodles before
        session.execute(update(Platform).values(name="codeblanks-demo"))
    run_launch(requests.Session(), lms.platform.launch("ali", lms.link().id))
    [platform] = registration.list_platforms(lms.store)
    assert platform.name == "Codeblanks demo LMS"  # the launch's tool_platform.name
    with lms.store.session() as session:
        session.execute(update(Platform).values(name="Our LMS"))
    run_launch(requests.Session(), lms.platform.launch("ali", lms.link().id))
    assert registration.list_platforms(lms.store)[0].name == "Our LMS"


@pytest.mark.parametrize(
    ("tool_platform", "named"),
    [
        ({"name": ["x"]}, None),
        ({"name": "  "}, None),
        ("not an object", None),
        ({"name": "Site", "product_family_code": {"not": "a code"}}, "Site"),
    ],
)
def test_an_odd_tool_platform_claim_breaks_no_launch(setup, tool_platform, named):
    lms, _, _ = setup
    host = urlsplit(lms.platform.issuer).hostname
    with lms.store.session() as session:
        session.execute(update(Platform).values(name=host))

    def odd(claims):
        claims["https://purl.imsglobal.org/spec/lti/claim/tool_platform"] = tool_platform

    trace = run_launch(
        requests.Session(),
        lms.platform.launch("ali", lms.link().id),
        authorize=lambda params: lms.platform.authorize(params, mutate=odd),
    )
    assert trace.launch.status_code == 302, trace.launch.text[:300]
    assert registration.list_platforms(lms.store)[0].name == (named or host)


def test_a_dynamically_registered_demo_lms_is_named_by_its_host_then_its_site(setup):
    lms, _, _ = setup
    page = requests.get(lms.platform.start_registration(token_url(lms)), timeout=30)
    assert page.status_code == 200, page.text[:300]
    new = registration.list_platforms(lms.store)[-1]
    assert new.name == urlsplit(lms.platform.issuer).hostname  # not "codeblanks-demo"
    link = lms.platform.add_link(new.client_id, "Lesson", custom={"lesson": SEED})
    run_launch(requests.Session(), lms.platform.launch("ali", link.id))
    assert registration.list_platforms(lms.store)[-1].name == "Codeblanks demo LMS"


SECRET_PHRASE = "UPSTREAM-SECRET internal=10.0.0.5"
DEEP = [("[" * 100_000, "JSON nested too deeply"), ('{"a":' * 100_000, "JSON nested too deeply")]


@pytest.mark.parametrize("endpoint", ["configuration", "registration endpoint"])
@pytest.mark.parametrize(
    ("body", "fault"),
    [*DEEP, ("<p>SECRET-BODY</p>", "did not answer JSON"), ('["SECRET-BODY"]', "a JSON object")],
)
def test_an_lms_that_answers_no_json_object_gets_a_page_naming_the_fault(
    setup, endpoint, body, fault
):
    lms, fake, _ = setup
    answer = (body, 200, {"Content-Type": "application/json"})
    if endpoint == "configuration":
        fake.config_answer = answer
    else:
        fake.register_answer = answer
    page = register(lms, fake, url=token_url(lms))
    text = html.unescape(page.text)
    assert page.status_code == 502, text[:300]  # the platform's fault, never a 500
    assert "Not an LTI platform" in text and fault in text and f"the LMS's {endpoint}" in text
    assert "SECRET-BODY" not in text


def test_an_lms_reason_phrase_is_never_shown(setup, caplog):
    lms, fake, _ = setup
    fake.register_answer = ("SECRET-BODY", "404 " + SECRET_PHRASE)
    with caplog.at_level(logging.WARNING):
        page = register(lms, fake, url=token_url(lms))
    text = html.unescape(page.text)
    assert page.status_code == 502 and "answered HTTP 404 Not Found" in text
    assert "UPSTREAM-SECRET" not in text and "10.0.0.5" not in text
    assert SECRET_PHRASE in caplog.text


def test_where_an_lms_redirects_is_never_shown(setup):
    lms, fake, _ = setup
    config_url = fake.url + "/elsewhere?to=ftp://upstream-secret.example/x"
    page = register(lms, fake, url=token_url(lms), openid_configuration=config_url)
    assert page.status_code == 502 and "LMS unreachable" in page.text
    assert "upstream-secret" not in page.text.lower()


def test_a_refused_url_in_an_lms_configuration_is_not_quoted(setup, caplog):
    lms, fake, _ = setup
    fake.jwks_uri = "http://UPSTREAM-SECRET.example/keys"  # plain http, off loopback
    with caplog.at_level(logging.WARNING):
        page = register(lms, fake, url=token_url(lms))
    text = html.unescape(page.text)
    assert page.status_code == 400 and "Refused URL" in text
    assert "the LMS's jwks_uri is not an https URL" in text and "UPSTREAM-SECRET" not in text
    assert "UPSTREAM-SECRET" in caplog.text


def test_the_authorization_server_is_kept_as_the_token_audience(setup):
    lms, fake, _ = setup
    fake.more_config = {"authorization_server": fake.url + "/audience"}
    page = register(lms, fake, url=token_url(lms))
    assert page.status_code == 200, page.text[:300]
    [found] = [p for p in registration.list_platforms(lms.store) if p.client_id == "fake-client"]
    assert found.token_audience == fake.url + "/audience"
    assert found.auth_token_url == fake.url + "/token"


@pytest.mark.parametrize(("audience", "family"), [
    ("canvas.instructure.com", "canvas"),  # Canvas's, doc/api/registration.md: a host, no URL
    ("https://canvas.instructure.com", "canvas"),  # Canvas's token endpoint wants its token URL
    ("http://UPSTREAM-SECRET.example/token", "moodle"),  # plain http off loopback
    (5, "moodle"),
    (["x"], "moodle"),
])  # fmt: skip
def test_an_authorization_server_that_is_no_audience_is_left_out(setup, audience, family):
    lms, fake, _ = setup
    fake.more_config = {"authorization_server": audience}
    fake.platform_config = {**fake.platform_config, "product_family_code": family}
    page = register(lms, fake, url=token_url(lms))
    assert page.status_code == 200, page.text[:300]  # registered all the same
    [found] = [p for p in registration.list_platforms(lms.store) if p.client_id == "fake-client"]
    assert found.token_audience is None  # the token URL stays the aud


def test_a_registration_the_store_keeps_out_quotes_none_of_the_lmss_values(setup):
    lms, fake, _ = setup
    fake.client_id = "UPSTREAM-SECRET-client"
    fake.platform_config = {registration.SITE_NAMES[0]: "UPSTREAM-SECRET site"}
    assert register(lms, fake, url=token_url(lms)).status_code == 200
    [first] = [p for p in registration.list_platforms(lms.store) if p.issuer == fake.url]
    fake.jwks_uri = fake.url + "/other-jwks"
    page = register(lms, fake, url=token_url(lms))
    text = html.unescape(page.text)
    assert page.status_code == 409 and f"register-url --replace {first.id}" in text
    assert "UPSTREAM-SECRET" not in text
