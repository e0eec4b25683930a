"""The demo LMS playing Blackboard Learn: one issuer, columns only from a lineItem."""

from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from demo import DemoServer, LineItem, Tool, run_launch
from tests.demo.fake_tool import FakeTool
from tests.demo.scores import post_score, score, stamp

AGS = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"


@pytest.fixture
def demo(state_dir: Path) -> Iterator[DemoServer]:
    with DemoServer(state_dir, personality="blackboard") as server:
        yield server


def test_every_launch_and_discovery_name_the_one_issuer(demo: DemoServer, registered: Tool) -> None:
    link = demo.platform.add_link(registered.client_id, "Attention", score_maximum=10)
    claims = run_launch(requests.Session(), demo.platform.launch("ali", link.id)).form.claims
    assert claims["iss"] == "https://blackboard.com" != demo.config.base_url
    found = requests.get(demo.platform.openid_config_url, timeout=5).json()
    assert found["issuer"] == "https://blackboard.com"
    assert "registration_endpoint" not in found  # registered by client id only
    assert requests.post(demo.config.url("/register"), json={}, timeout=5).status_code == 404
    family = claims["https://purl.imsglobal.org/spec/lti/claim/tool_platform"]
    assert family["product_family_code"] == "BlackboardLearn"


def test_a_deep_linked_item_without_line_item_gets_no_column(
    demo: DemoServer, registered: Tool, tool: FakeTool
) -> None:
    request = run_launch(requests.Session(), demo.platform.deep_link("ada", registered.client_id))
    claims = tool.deep_link_claims(
        request.form.claims,
        [{"type": "ltiResourceLink", "title": "Web link"}],
    )
    answer = requests.post(
        demo.config.url("/deep_link_return"), data={"JWT": tool.sign(claims)}, timeout=10
    )
    assert answer.status_code == 200, answer.text
    [link] = demo.platform.links()
    assert demo.platform.lineitems_of(link) == []
    launch = run_launch(requests.Session(), demo.platform.launch("ali", link.id)).form.claims
    assert "lineitem" not in launch[AGS] and launch[AGS]["lineitems"]
    assert launch["iss"] == "https://blackboard.com"


def test_a_score_without_score_given_deletes_the_grade(
    demo: DemoServer, item: LineItem, auth: dict[str, str]
) -> None:
    assert post_score(demo, item, score(scoreGiven=7, scoreMaximum=None), auth).status_code == 200
    url = demo.platform.lineitem_url(item) + "/results"
    [kept] = requests.get(url, headers=auth, timeout=5).json()
    assert kept["resultScore"] == 7.0  # scoreMaximum left out: the column's own (10)
    deleted = score(
        scoreGiven=None,
        scoreMaximum=None,
        activityProgress="Initialized",
        gradingProgress="NotReady",
        timestamp=stamp(2),  # Blackboard's timestamp rules are unrecorded: a later one
    )
    assert post_score(demo, item, deleted, auth).status_code == 200
    assert requests.get(url, headers=auth, timeout=5).json() == []  # Moodle lists the user
    assert demo.platform.gradebook() == {}
