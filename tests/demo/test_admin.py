"""The admin API, for a demo platform running in another process (codeblanks dev)."""

import json

import requests

from demo import DemoServer, LoginInitiation, Tool, run_launch
from tests.demo.fake_tool import FakeTool

SCORE_TYPE = "application/vnd.ims.lis.v1.score+json"


def test_admin_api_places_a_link_starts_a_launch_and_lists_scores(
    demo: DemoServer, tool: FakeTool, registered: Tool
) -> None:
    admin = demo.config.url("/admin")
    placed = requests.post(
        admin + "/links",
        json={
            "client_id": registered.client_id,
            "title": "Quiz",
            "score_maximum": 3,
            "custom": {"lesson": "expert/what-is-attention"},
        },
        timeout=5,
    )
    assert placed.status_code == 201
    link_id = placed.json()["id"]

    started = requests.get(admin + "/launch", params={"user": "can", "link": link_id}, timeout=5)
    body = started.json()
    assert body["method"] == "POST" and body["login_url"] == tool.login_url
    assert body["url"].startswith(tool.login_url + "?")  # for a caller that GETs instead
    initiation = LoginInitiation(body["login_url"], body["method"], body["params"])
    trace = run_launch(requests.Session(), initiation)
    assert trace.launch.status_code == 200
    assert trace.form.claims["sub"] == "demo-can"

    deep = requests.get(
        admin + "/launch", params={"user": "ada", "client_id": tool.client_id}, timeout=5
    )
    assert deep.status_code == 200
    student_deep = requests.get(
        admin + "/launch", params={"user": "ali", "client_id": tool.client_id}, timeout=5
    )
    assert student_deep.status_code == 403 and "instructor" in student_deep.text

    [item] = demo.platform.lineitems()
    token = tool.access_token(demo.platform, "https://purl.imsglobal.org/spec/lti-ags/scope/score")
    score = {
        "userId": "demo-can",
        "scoreGiven": 3,
        "scoreMaximum": 3,
        "timestamp": "2026-01-01T00:00:00Z",
        "activityProgress": "Completed",
        "gradingProgress": "FullyGraded",
    }
    posted = requests.post(
        demo.platform.lineitem_url(item) + "/scores",
        data=json.dumps(score),
        headers={"Authorization": f"Bearer {token}", "Content-Type": SCORE_TYPE},
        timeout=5,
    )
    assert posted.status_code == 200
    [kept] = requests.get(admin + "/scores", timeout=5).json()
    assert kept["body"] == score and kept["applied"] is True

    unknown = requests.post(admin + "/links", json={"client_id": "nobody", "title": "x"}, timeout=5)
    assert unknown.status_code == 404 and unknown.json()["error_description"]
