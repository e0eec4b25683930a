"""The demo LMS playing Brightspace (D2L): links without grade items, the tool makes them."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from demo import DemoServer, LineItem, Tool, run_launch
from tests.demo.fake_tool import FakeTool
from tests.demo.scores import ALL_AGS, LINEITEM_TYPE, post_score, score

AGS = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"


@pytest.fixture
def demo(state_dir: Path) -> Iterator[DemoServer]:
    with DemoServer(state_dir, personality="brightspace") as server:
        yield server


def post_item(demo: DemoServer, auth: dict[str, str], body: dict[str, object]) -> requests.Response:
    return requests.post(
        demo.platform.lineitems_url("demo-course-1"),
        data=json.dumps(body),
        headers={**auth, "Content-Type": LINEITEM_TYPE},
        timeout=5,
    )


def test_a_placed_link_launches_with_lineitems_but_no_lineitem(
    demo: DemoServer, registered: Tool
) -> None:
    link = demo.platform.add_link(registered.client_id, "Attention", score_maximum=10)
    assert demo.platform.lineitems_of(link) == []  # Moodle makes the grade item here
    claims = run_launch(requests.Session(), demo.platform.launch("ali", link.id)).form.claims
    ags = claims[AGS]
    assert "lineitem" not in ags
    assert ags["lineitems"] == demo.platform.lineitems_url("demo-course-1")
    family = claims["https://purl.imsglobal.org/spec/lti/claim/tool_platform"]
    assert family["product_family_code"] == "desire2learn"


def test_a_line_item_posted_with_the_link_id_binds_it(
    demo: DemoServer, registered: Tool, auth: dict[str, str]
) -> None:
    link = demo.platform.add_link(registered.client_id, "Attention", score_maximum=10)
    made = post_item(
        demo, auth, {"label": "Attention", "scoreMaximum": 8, "resourceLinkId": link.id}
    )
    assert made.status_code == 201, made.text
    [item] = demo.platform.lineitems_of(link)
    assert made.json()["id"] == demo.platform.lineitem_url(item)
    claims = run_launch(requests.Session(), demo.platform.launch("ali", link.id)).form.claims
    assert claims[AGS]["lineitem"] == demo.platform.lineitem_url(item)


def test_a_score_above_the_maximum_is_taken_and_clipped(
    demo: DemoServer, registered: Tool, tool: FakeTool
) -> None:
    auth = {"Authorization": f"Bearer {tool.access_token(demo.platform, ALL_AGS)}"}
    link = demo.platform.add_link(registered.client_id, "Attention")
    post_item(demo, auth, {"label": "Attention", "scoreMaximum": 10, "resourceLinkId": link.id})
    [item] = demo.platform.lineitems_of(link)
    answer = post_score(demo, item, score(scoreGiven=12, scoreMaximum=10), auth)
    assert answer.status_code == 200, answer.text  # Moodle's demo: 400
    results = requests.get(demo.platform.lineitem_url(item) + "/results", headers=auth, timeout=5)
    assert results.json()[0]["resultScore"] == 10.0


def test_deep_linking_with_a_line_item_makes_the_grade_item(
    demo: DemoServer, registered: Tool, tool: FakeTool
) -> None:
    request = run_launch(requests.Session(), demo.platform.deep_link("ada", registered.client_id))
    item = {
        "type": "ltiResourceLink",
        "title": "Attention",
        "lineItem": {"scoreMaximum": 8, "label": "Attention"},
    }
    answer = requests.post(
        demo.config.url("/deep_link_return"),
        data={"JWT": tool.sign(tool.deep_link_claims(request.form.claims, [item]))},
        timeout=10,
    )
    assert answer.status_code == 200, answer.text
    [link] = demo.platform.links()
    [made] = demo.platform.lineitems_of(link)
    assert isinstance(made, LineItem) and made.score_maximum == 8
    claims = run_launch(requests.Session(), demo.platform.launch("ali", link.id)).form.claims
    assert claims[AGS]["lineitem"] == demo.platform.lineitem_url(made)
    family = claims["https://purl.imsglobal.org/spec/lti/claim/tool_platform"]
    assert family["product_family_code"] == "desire2learn"


def test_discovery_names_the_token_audience_apart_from_the_token_url(demo: DemoServer) -> None:
    config = requests.get(demo.platform.openid_config_url, timeout=5).json()
    assert config["authorization_server"] == "https://api.brightspace.com/auth/token"
    assert config["token_endpoint"] == demo.platform.token_url != config["authorization_server"]
    page = requests.get(demo.config.url("/"), timeout=5).text  # what its admin copies by hand
    assert "OAuth2 audience <code>https://api.brightspace.com/auth/token</code>" in page


def test_the_token_endpoint_wants_the_audience_not_its_own_url(
    demo: DemoServer, registered: Tool, tool: FakeTool
) -> None:
    url = demo.platform.token_url
    refused = tool.token_request(url, ALL_AGS, tool.sign(tool.assertion_claims(url)))
    assert refused.status_code == 400  # Moodle's demo takes this one
    assert refused.json()["error"] == "invalid_grant"
    assert refused.json()["error_description"].startswith("Error validating assertion")
    audience = demo.platform.token_audience
    granted = tool.token_request(url, ALL_AGS, tool.sign(tool.assertion_claims(audience)))
    assert granted.status_code == 200, granted.text
    assert granted.json()["scope"] == ALL_AGS
