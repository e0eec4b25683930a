from pathlib import Path

import pytest
import requests

from demo import DemoConfig, DemoServer
from demo.personalities import BY_NAME, NAMES


def test_every_name_has_one_personality() -> None:
    assert tuple(BY_NAME) == NAMES


def test_an_unknown_lms_is_refused_by_name(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown LMS personality 'ilias'"):
        DemoConfig(base_url="http://127.0.0.1:9/demo", state_dir=tmp_path, personality="ilias")


def test_the_default_is_the_moodle_like_demo(tmp_path: Path) -> None:
    config = DemoConfig(base_url="http://127.0.0.1:9/demo", state_dir=tmp_path)
    assert config.lms == "moodle"
    assert config.product_family_code == "codeblanks-demo"


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("canvas", "canvas"),
        ("brightspace", "desire2learn"),
        ("blackboard", "BlackboardLearn"),
        ("sakai", "sakai"),
    ],
)
def test_a_personality_names_its_product_in_discovery(
    state_dir: Path, name: str, code: str
) -> None:
    with DemoServer(state_dir, personality=name) as demo:
        assert demo.config.plays is BY_NAME[name]
        found = requests.get(demo.platform.openid_config_url, timeout=10).json()
        lti = found["https://purl.imsglobal.org/spec/lti-platform-configuration"]
        assert lti["product_family_code"] == code
