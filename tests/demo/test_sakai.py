"""The demo LMS playing Sakai: two admin checkboxes decide the score scope; every error a 400."""

from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from demo import DemoServer, LineItem, Tool, run_launch
from tests.demo.fake_tool import FakeTool
from tests.demo.scores import ALL_AGS, SCOPE, post_score, score

AGS = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
TOOL_CONFIG = "https://purl.imsglobal.org/spec/lti-tool-configuration"
DETAIL = "X-Tsugi-LTI13-Error-Detail"


@pytest.fixture
def demo(state_dir: Path) -> Iterator[DemoServer]:
    with DemoServer(state_dir, personality="sakai") as server:
        yield server


def tick(demo: DemoServer, client_id: str, outcomes: bool, lineitems: bool) -> None:
    """Tick the tool's boxes as a Sakai admin would, through the platform's admin API."""
    answer = requests.post(
        demo.config.url(f"/admin/tools/{client_id}/checkboxes"),
        json={"outcomes": outcomes, "lineitems": lineitems},
        timeout=5,
    )
    assert answer.status_code == 200, answer.text


def ask(demo: DemoServer, tool: FakeTool, scope: str) -> requests.Response:
    assertion = tool.sign(tool.assertion_claims(demo.platform.token_url))
    return tool.token_request(demo.platform.token_url, scope, assertion)


def test_the_launch_lists_only_the_lineitem_scope(demo: DemoServer, registered: Tool) -> None:
    tick(demo, registered.client_id, True, True)
    link = demo.platform.add_link(registered.client_id, "Attention", score_maximum=10)
    claims = run_launch(requests.Session(), demo.platform.launch("ali", link.id)).form.claims
    assert claims[AGS]["scope"] == [SCOPE + "lineitem"]  # Moodle lists every granted one
    assert claims[AGS]["lineitem"] and claims[AGS]["lineitems"]


def test_without_return_grades_the_launch_has_no_urls(demo: DemoServer, registered: Tool) -> None:
    tick(demo, registered.client_id, False, True)
    link = demo.platform.add_link(registered.client_id, "Attention", score_maximum=10)
    claims = run_launch(requests.Session(), demo.platform.launch("ali", link.id)).form.claims
    assert claims[AGS] == {"scope": [SCOPE + "lineitem"]}


@pytest.mark.parametrize(("outcomes", "lineitems"), [(True, False), (False, True), (False, False)])
def test_the_score_scope_needs_both_boxes(
    demo: DemoServer, registered: Tool, tool: FakeTool, outcomes: bool, lineitems: bool
) -> None:
    tick(demo, registered.client_id, outcomes, lineitems)
    refused = ask(demo, tool, ALL_AGS)
    assert refused.status_code == 400
    assert refused.json() == {"error": "invalid_scope"}
    assert refused.headers[DETAIL].startswith(SCOPE)
    assert refused.headers["Cache-Control"] == "no-store"


def test_both_boxes_grant_every_ags_scope(
    demo: DemoServer, registered: Tool, tool: FakeTool
) -> None:
    assert ask(demo, tool, ALL_AGS).status_code == 400  # none until the admin ticks them
    tick(demo, registered.client_id, True, True)
    granted = ask(demo, tool, ALL_AGS)
    assert granted.status_code == 200, granted.text
    assert set(granted.json()["scope"].split()) == set(ALL_AGS.split())


def test_the_boxes_start_unticked(demo: DemoServer, registered: Tool, tool: FakeTool) -> None:
    refused = ask(demo, tool, SCOPE + "score")
    assert refused.status_code == 400 and refused.headers[DETAIL] == SCOPE + "score"


def test_a_missing_line_item_is_a_400_not_a_404(
    demo: DemoServer, registered: Tool, tool: FakeTool, item: LineItem
) -> None:
    tick(demo, registered.client_id, True, True)
    auth = {"Authorization": f"Bearer {tool.access_token(demo.platform, ALL_AGS)}"}
    assert post_score(demo, item, score(), auth).status_code == 200
    gone = LineItem(**{**item.__dict__, "id": item.id + 99})
    assert post_score(demo, gone, score(), auth).status_code == 400  # Moodle: 404


def test_dynamic_registration_answers_the_deployment_id(demo: DemoServer, tool: FakeTool) -> None:
    requests.get(demo.platform.start_registration(tool.register_url), timeout=10)
    [answer] = tool.registrations
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body[TOOL_CONFIG]["deployment_id"] == "1"
    assert demo.platform.tool(body["client_id"]).deployment_id == "1"
