from pathlib import Path

import pytest
import requests

from demo import DemoError, DemoServer, Tool
from tests.demo.fake_tool import FakeTool

MEMBERSHIPS = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
SCORE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
CONTAINER = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json"


def get(demo: DemoServer, token: str, **params: str) -> requests.Response:
    return requests.get(
        demo.platform.memberships_url("demo-course-1"),
        params=params,
        headers={"Authorization": f"Bearer {token}", "Accept": CONTAINER},
        timeout=5,
    )


def test_memberships_list_everyone_even_those_who_never_launched(
    demo: DemoServer, tool: FakeTool, registered: Tool
) -> None:
    answer = get(demo, tool.access_token(demo.platform, MEMBERSHIPS))
    assert answer.status_code == 200
    assert answer.headers["Content-Type"] == CONTAINER
    body = answer.json()
    assert body["id"] == demo.platform.memberships_url("demo-course-1")
    assert body["context"] == {"id": "demo-course-1", "label": "DEMO101", "title": "Demo course"}
    members = {m["user_id"]: m for m in body["members"]}
    assert set(members) == {"demo-ada", "demo-ali", "demo-berna", "demo-can"}
    assert members["demo-can"]["name"] == "Can Student"
    assert members["demo-can"]["status"] == "Active"
    assert members["demo-ada"]["roles"] == [
        "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
    ]


@pytest.mark.parametrize(
    "role, count",
    [("Learner", 3), ("http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor", 1)],
)
def test_memberships_filter_by_role(
    demo: DemoServer, tool: FakeTool, registered: Tool, role: str, count: int
) -> None:
    answer = get(demo, tool.access_token(demo.platform, MEMBERSHIPS), role=role)
    assert len(answer.json()["members"]) == count


def test_memberships_need_their_scope_and_an_own_link(
    demo: DemoServer, tool: FakeTool, registered: Tool
) -> None:
    assert get(demo, tool.access_token(demo.platform, SCORE)).status_code == 403
    token = tool.access_token(demo.platform, MEMBERSHIPS)
    assert get(demo, token, rlid="rl-not-ours").status_code == 403
    link = demo.platform.add_link(registered.client_id, "Lesson")
    assert get(demo, token, rlid=link.id).status_code == 200


def test_a_larger_class_is_listed_and_launches(state_dir: Path, tool: FakeTool) -> None:
    # a deadline rush (benchmarks/rush.py) needs hundreds of students, each a person of their own
    with DemoServer(state_dir, learners=5) as demo:
        registered = tool.register_with(demo.platform)
        link = demo.platform.add_link(registered.client_id, "Attention", score_maximum=10)
        answer = get(demo, tool.access_token(demo.platform, MEMBERSHIPS), role="Learner")
        members = {m["user_id"] for m in answer.json()["members"]}
        assert members == {"demo-ali", "demo-berna", "demo-can"} | {
            f"demo-learner-{n}" for n in range(1, 6)
        }
        hint = demo.platform.launch("demo-learner-5", link.id).params["login_hint"]
        assert hint == "demo-learner-5"
        with pytest.raises(DemoError, match="no user"):
            demo.platform.launch("demo-learner-6", link.id)
