import stat

import jwt
import pytest

from service.lti.keys import KeyRing, thumbprint


@pytest.fixture
def ring(tmp_path):
    return KeyRing(tmp_path / "keys", grace_s=100)


def test_first_use_creates_one_private_key_readable_by_owner_only(ring):
    key = ring.current()
    assert ring.current() == key
    pem = ring.directory / f"{key.kid}.pem"
    assert stat.S_IMODE(pem.stat().st_mode) == 0o600
    assert stat.S_IMODE(ring.directory.stat().st_mode) == 0o700
    assert b"PRIVATE KEY" in pem.read_bytes()


def test_jwks_publishes_the_public_key_with_its_thumbprint_kid(ring):
    key = ring.current()
    (published,) = ring.jwks()["keys"]
    assert published["kid"] == key.kid == thumbprint(published)
    assert {"kty", "n", "e", "alg", "use"} <= set(published)
    assert "d" not in published and "p" not in published
    token = jwt.encode({"sub": "x"}, key.private_pem, algorithm="RS256", headers={"kid": key.kid})
    public = jwt.PyJWK(published).key
    assert jwt.decode(token, public, algorithms=["RS256"])["sub"] == "x"


def test_rotation_keeps_old_key_published_for_the_grace_period(ring):
    old = ring.current()
    new = ring.rotate(now=1000.0)
    assert new.kid != old.kid and ring.current() == new
    kids = [k["kid"] for k in ring.jwks(now=1050.0)["keys"]]
    assert kids == [new.kid, old.kid]
    assert [k["kid"] for k in ring.jwks(now=1100.0)["keys"]] == [new.kid]
    ring.rotate(now=1200.0)
    assert not (ring.directory / f"{old.kid}.pem").exists()


def test_two_rings_on_one_directory_agree(tmp_path):
    first, second = KeyRing(tmp_path / "k"), KeyRing(tmp_path / "k")
    assert first.current() == second.current()
    rotated = first.rotate()
    assert second.current() == rotated
