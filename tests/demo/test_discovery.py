import stat
from pathlib import Path

import requests

from demo import DemoConfig, DemoPlatform, DemoServer

PLATFORM_CONFIG = "https://purl.imsglobal.org/spec/lti-platform-configuration"


def test_openid_configuration_describes_the_platform(demo: DemoServer) -> None:
    config = requests.get(demo.platform.openid_config_url, timeout=5).json()
    base = demo.url + "/demo"
    assert config["issuer"] == demo.platform.issuer == base
    assert config["authorization_endpoint"] == base + "/auth"
    assert config["token_endpoint"] == base + "/token"
    assert config["jwks_uri"] == base + "/jwks"
    assert config["registration_endpoint"] == base + "/register"
    assert config["token_endpoint_auth_methods_supported"] == ["private_key_jwt"]
    assert config["id_token_signing_alg_values_supported"] == ["RS256"]
    assert "https://purl.imsglobal.org/spec/lti-ags/scope/score" in config["scopes_supported"]
    lti = config[PLATFORM_CONFIG]
    assert lti["product_family_code"] == "codeblanks-demo"
    assert {m["type"] for m in lti["messages_supported"]} == {
        "LtiResourceLinkRequest",
        "LtiDeepLinkingRequest",
    }
    assert "User.id" in lti["variables"]


def test_jwks_publishes_only_the_public_signing_key(demo: DemoServer) -> None:
    keys = requests.get(demo.platform.jwks_url, timeout=5).json()["keys"]
    assert len(keys) == 1
    assert keys[0]["kid"] == demo.platform.key.kid
    assert keys[0]["alg"] == "RS256" and keys[0]["kty"] == "RSA"
    assert "d" not in keys[0] and "p" not in keys[0]


def test_key_is_made_once_private_and_kept_across_restarts(tmp_path: Path) -> None:
    config = DemoConfig(base_url="http://127.0.0.1:9/demo", state_dir=tmp_path / "state")
    first, second = DemoPlatform(config), DemoPlatform(config)
    assert first.key.kid == second.key.kid
    key_file = tmp_path / "state" / "platform-key.pem"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert [p.name for p in key_file.parent.iterdir() if p.name.startswith(".")] == []


def test_state_survives_a_restart(tmp_path: Path) -> None:
    config = DemoConfig(base_url="http://127.0.0.1:9/demo", state_dir=tmp_path)
    tool = DemoPlatform(config).register_tool(
        name="T",
        login_url="http://127.0.0.1:8/login",
        launch_url="http://127.0.0.1:8/launch",
        jwks_url="http://127.0.0.1:8/jwks",
    )
    assert DemoPlatform(config).tool(tool.client_id) == tool
