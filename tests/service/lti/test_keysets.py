import json
import threading

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from service.lti.claims import LaunchProblem
from service.lti.keysets import KeySets


def make_jwk(kid):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    return key, {**public, "kid": kid, "alg": "RS256"}


@pytest.fixture
def platform():
    """A real HTTP server publishing a JWKS that the test can change."""
    state = {"keys": [], "hits": 0, "status": 200}

    @Request.application
    def app(request):
        state["hits"] += 1
        return Response(
            json.dumps({"keys": state["keys"]}),
            status=state["status"],
            content_type="application/json",
        )

    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state["url"] = f"http://127.0.0.1:{server.server_port}/jwks"
    yield state
    server.shutdown()


def test_known_kid_is_served_from_cache(platform):
    key, jwk = make_jwk("k1")
    platform["keys"] = [jwk]
    sets = KeySets()
    token = jwt.encode({"a": 1}, key, algorithm="RS256", headers={"kid": "k1"})
    for _ in range(3):
        public = sets.public_key(platform["url"], "k1", "RS256")
        assert jwt.decode(token, public, algorithms=["RS256"]) == {"a": 1}
    assert platform["hits"] == 1


def test_unknown_kid_refetches_once_then_waits(platform):
    _, first = make_jwk("k1")
    platform["keys"] = [first]
    sets = KeySets(refetch_s=60)
    sets.public_key(platform["url"], "k1", "RS256")
    for _ in range(5):
        with pytest.raises(LaunchProblem, match="Unknown key"):
            sets.public_key(platform["url"], "forged", "RS256")
    assert platform["hits"] == 1  # fetched at start; the forged kids did not refetch within 60 s


def test_rotated_key_is_picked_up(platform):
    _, first = make_jwk("k1")
    _, second = make_jwk("k2")
    platform["keys"] = [first]
    sets = KeySets(refetch_s=0)
    sets.public_key(platform["url"], "k1", "RS256")
    platform["keys"] = [second]
    assert sets.public_key(platform["url"], "k2", "RS256") is not None
    assert platform["hits"] == 2


@pytest.mark.parametrize(
    ("kid", "alg", "message"),
    [
        (None, "RS256", "Missing kid"),
        ("k1", "none", "Refused algorithm"),
        ("k1", "HS256", "Refused algorithm"),
        ("k1", "RS384", "Key algorithm mismatch"),
    ],
)
def test_refused_headers(platform, kid, alg, message):
    _, jwk = make_jwk("k1")
    platform["keys"] = [jwk]
    with pytest.raises(LaunchProblem, match=message):
        KeySets().public_key(platform["url"], kid, alg)


def test_unreachable_or_broken_key_set_is_a_clear_problem(platform):
    platform["status"] = 500
    with pytest.raises(LaunchProblem) as info:
        KeySets().public_key(platform["url"], "k1", "RS256")
    assert info.value.title == "Key set unavailable" and info.value.status == 502
    with pytest.raises(LaunchProblem, match="Key set unavailable"):
        KeySets().public_key("http://127.0.0.1:9/jwks", "k1", "RS256")
