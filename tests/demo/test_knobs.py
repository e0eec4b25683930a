"""Failure switches: the token and AGS/NRPS endpoints fail or hang on demand."""

import json
import time

import pytest
import requests

from demo import DemoServer, LineItem, Tool
from tests.demo.fake_tool import FakeTool
from tests.demo.scores import ALL_AGS, SCOPE, SCORE_TYPE, post_score, score


def test_failure_knobs_make_token_and_ags_fail_then_recover(
    demo: DemoServer, tool: FakeTool, item: LineItem, auth: dict[str, str]
) -> None:
    demo.platform.knobs.reset()
    demo.platform.fail("token", times=2)
    codes = [
        tool.token_request(
            demo.platform.token_url,
            ALL_AGS,
            tool.sign(tool.assertion_claims(demo.platform.token_url)),
        ).status_code
        for _ in range(3)
    ]
    assert codes == [500, 500, 200]
    assert demo.platform.knobs.hits["token"] == 3

    demo.platform.fail("ags", times=1, mode="timeout", delay_s=0.6)
    with pytest.raises(requests.Timeout):
        requests.post(
            demo.platform.lineitem_url(item) + "/scores",
            data=json.dumps(score()),
            headers={**auth, "Content-Type": SCORE_TYPE},
            timeout=0.2,
        )
    assert post_score(demo, item, score(), auth).status_code == 200
    assert len(demo.platform.scores()) == 1


def test_failure_knobs_over_http(demo: DemoServer, tool: FakeTool, registered: Tool) -> None:
    knobs = demo.config.url("/admin/knobs")
    armed = requests.post(knobs, json={"target": "nrps", "times": 1}, timeout=5)
    assert armed.status_code == 200
    token = tool.access_token(demo.platform, f"{SCOPE}score")
    url = demo.platform.memberships_url("demo-course-1")
    assert (
        requests.get(url, headers={"Authorization": f"Bearer {token}"}, timeout=5).status_code
        == 500
    )
    assert requests.delete(knobs, timeout=5).json() == {"hits": {}}
    bad = requests.post(knobs, json={"target": "everything"}, timeout=5)
    assert bad.status_code == 400 and "unknown failure target" in bad.text


def test_the_platform_can_be_down_for_a_while_then_answer_again(
    demo: DemoServer, tool: FakeTool, registered: Tool
) -> None:
    """As Moodle behind its web server with PHP stopped: 502 to every call, then back."""
    demo.platform.knobs.reset()
    knobs = demo.config.url("/admin/knobs")
    assert requests.post(knobs, json={"down_s": 0.5, "status": 502}, timeout=5).status_code == 200

    def token_status() -> int:
        claims = tool.assertion_claims(demo.platform.token_url)
        request = tool.token_request(demo.platform.token_url, ALL_AGS, tool.sign(claims))
        return request.status_code

    url = demo.platform.memberships_url("demo-course-1")
    assert token_status() == 502
    assert requests.get(url, timeout=5).status_code == 502  # before any check of its own
    time.sleep(0.6)
    assert token_status() == 200
    assert demo.platform.knobs.hits["token"] == 2
    for wrong in ({"down_s": 5, "status": 404}, {"down_s": "soon"}, {"down_s": 5, "mode": "x"}):
        bad = requests.post(knobs, json=wrong, timeout=5)
        assert bad.status_code == 400, (wrong, bad.text)
    demo.platform.knobs.reset()
