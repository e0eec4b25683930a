"""The hardened launch against a real key set server, one check at a time."""

import json
import threading
import time
from urllib.parse import urlsplit

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from service.lti.claims import LaunchProblem
from service.lti.keysets import KeySets
from service.lti.validation import LTI, HardenedLaunch, Login
from service.outbound import Allowed, Client, Policy

BASE = "http://127.0.0.1:5000"
ISS = "https://lms.example.org"


def rsa_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


PLATFORM_KEY, OTHER_KEY = rsa_key(), rsa_key()


@pytest.fixture(scope="module")
def key_set_url():
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(PLATFORM_KEY.public_key()))
    document = json.dumps({"keys": [{**jwk, "kid": "k1", "alg": "RS256"}]})

    @Request.application
    def app(request):
        return Response(document, content_type="application/json")

    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/jwks"
    server.shutdown()


def _now():
    return int(time.time())


def claims(**changes):
    now = int(time.time())
    body = {
        "iss": ISS,
        "aud": "client-1",
        "sub": "user-1",
        "iat": now,
        "exp": now + 60,
        "nonce": "nonce-1",
        LTI + "version": "1.3.0",
        LTI + "message_type": "LtiResourceLinkRequest",
        LTI + "deployment_id": "dep-1",
        LTI + "roles": ["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"],
        LTI + "resource_link": {"id": "rl-1"},
        LTI + "target_link_uri": BASE + "/lti/launch",
    }
    for key, value in changes.items():
        key = key.replace("LTI_", LTI)
        if value is None:
            body.pop(key, None)
        else:
            body[key] = value
    return body


def sign(body, key=PLATFORM_KEY, alg="RS256", kid="k1"):
    headers = {} if kid is None else {"kid": kid}
    if alg == "HS256":
        return jwt.encode(
            body, "secret-secret-secret-secret-secret", algorithm=alg, headers=headers
        )
    if alg == "none":
        return jwt.encode(body, None, algorithm="none", headers=headers)
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return jwt.encode(body, pem, algorithm=alg, headers=headers)


class Harness:
    def __init__(self, key_set_url):
        self.login = Login(1, ISS, "client-1", key_set_url, "nonce-1")
        self.key_sets = KeySets(Client(Policy(Allowed.parse(urlsplit(key_set_url).netloc))))
        self.used = set()
        self.deployments = {(1, "dep-1")}

    def use_nonce(self, issuer, nonce):
        if (issuer, nonce) in self.used:
            return False
        self.used.add((issuer, nonce))
        return True

    def launch(self, token):
        form = {"id_token": token, "state": "s"} if token is not None else {"state": "s"}
        return HardenedLaunch(
            form,
            self.login,
            self.key_sets,
            BASE,
            self.use_nonce,
            lambda platform, dep: (platform, dep) in self.deployments,
        ).run()


@pytest.fixture
def harness(key_set_url):
    return Harness(key_set_url)


def test_a_good_launch_passes(harness):
    launch = harness.launch(sign(claims()))
    assert launch.message_type == "LtiResourceLinkRequest"
    assert launch.claim("resource_link") == {"id": "rl-1"}


def test_thirty_seconds_of_clock_skew_are_accepted(harness):
    now = int(time.time())
    assert harness.launch(sign(claims(iat=now + 30, exp=now + 90)))


def test_the_same_token_twice_is_a_replay(harness):
    token = sign(claims())
    harness.launch(token)
    with pytest.raises(LaunchProblem, match="Replayed launch"):
        harness.launch(token)


# tokens are signed when their case runs: signed at collection, a long session expires them
INVALID = [
    ("no id_token", lambda: None, "Missing id_token"),
    ("not a JWT", lambda: "abc.def", "Malformed id_token"),
    ("garbage segments", lambda: "a.b.c", "Malformed id_token"),
    ("bad signature", lambda: sign(claims(), key=OTHER_KEY), "Invalid id_token"),
    ("unknown kid", lambda: sign(claims(), kid="k9"), "Unknown key"),
    ("missing kid", lambda: sign(claims(), kid=None), "Missing kid"),
    ("alg none", lambda: sign(claims(), alg="none"), "Refused algorithm"),
    ("alg HS256", lambda: sign(claims(), alg="HS256"), "Refused algorithm"),
    ("expired", lambda: sign(claims(iat=_now() - 600, exp=_now() - 120)), "Expired launch"),
    ("missing exp", lambda: sign(claims(exp=None)), "Invalid id_token"),
    ("missing iat", lambda: sign(claims(iat=None)), "Invalid id_token"),
    (
        "iat in the future",
        lambda: sign(claims(iat=_now() + 600, exp=_now() + 900)),
        "Launch from the future",
    ),
    ("wrong iss", lambda: sign(claims(iss="https://evil.example.org")), "Wrong issuer"),
    ("wrong aud", lambda: sign(claims(aud="client-2")), "Wrong client id"),
    ("aud list without azp", lambda: sign(claims(aud=["client-1", "x"])), "No client id"),
    ("wrong azp", lambda: sign(claims(aud=["client-1", "x"], azp="x")), "Wrong client id"),
    ("azp not ours", lambda: sign(claims(aud="client-1", azp="client-2")), "Wrong client id"),
    ("wrong nonce", lambda: sign(claims(nonce="other")), "Wrong nonce"),
    ("missing nonce", lambda: sign(claims(nonce=None)), "Invalid id_token"),
    ("unknown deployment", lambda: sign(claims(LTI_deployment_id="dep-9")), "Unknown deployment"),
    ("wrong version", lambda: sign(claims(LTI_version="1.1.0")), "Unsupported LTI version"),
    (
        "wrong message type",
        lambda: sign(claims(LTI_message_type="Other")),
        "Unsupported message type",
    ),
    ("missing roles", lambda: sign(claims(LTI_roles=None)), "Missing roles"),
    ("missing sub", lambda: sign(claims(sub=None)), "Missing sub"),
    (
        "missing resource link",
        lambda: sign(claims(LTI_resource_link=None)),
        "Missing resource link",
    ),
    (
        "foreign target",
        lambda: sign(claims(LTI_target_link_uri="https://evil.example.org/")),
        "Foreign target_link_uri",
    ),
    ("oversized sub", lambda: sign(claims(sub="s" * 300)), "Oversized sub"),
    (
        "oversized deployment",
        lambda: sign(claims(LTI_deployment_id="d" * 300)),
        "Oversized deployment",
    ),
    (
        "deep link without return url",
        lambda: sign(
            claims(
                LTI_message_type="LtiDeepLinkingRequest",
                LTI_resource_link=None,
                **{
                    "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings": {
                        "accept_types": ["ltiResourceLink"]
                    }
                },
            )
        ),
        "Missing return URL",
    ),
]


@pytest.mark.parametrize(("case", "token", "title"), INVALID, ids=[c[0] for c in INVALID])
def test_invalid_launches_are_refused(harness, case, token, title):
    with pytest.raises(LaunchProblem) as info:
        harness.launch(token())
    assert str(info.value.title).startswith(title), (case, info.value)
    assert 400 <= info.value.status < 500
