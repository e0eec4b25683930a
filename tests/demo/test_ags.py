import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests

from demo import DemoServer, LineItem, Tool
from tests.demo.fake_tool import FakeTool
from tests.demo.scores import (
    ALL_AGS,
    CANVAS,
    LINEITEM_TYPE,
    READ_ONLY,
    SCORE_TYPE,
    at,
    post_score,
    score,
    stamp,
)


def test_a_good_score_lands_in_the_gradebook(
    demo: DemoServer, item: LineItem, auth: dict[str, str]
) -> None:
    body = score()
    answer = post_score(demo, item, body, auth)
    assert answer.status_code == 200, answer.text
    [kept] = demo.platform.scores()
    assert (kept.body, kept.user_id, kept.lineitem_id, kept.applied) == (
        body,
        "demo-ali",
        item.id,
        True,
    )
    assert demo.platform.gradebook() == {("demo-ali", item.id): kept}
    results = requests.get(demo.platform.lineitem_url(item) + "/results", headers=auth, timeout=5)
    assert results.headers["Content-Type"] == "application/vnd.ims.lis.v2.resultcontainer+json"
    [result] = results.json()
    assert result["userId"] == "demo-ali" and result["resultScore"] == 7
    assert result["resultMaximum"] == 10 and result["comment"] == "2 of 3 tests pass"
    assert result["scoreOf"] == demo.platform.lineitem_url(item)


def test_a_canvas_submission_score_is_accepted_and_scaled(
    demo: DemoServer, item: LineItem, auth: dict[str, str]
) -> None:
    extension = {
        "new_submission": True,
        "submission_type": "basic_lti_launch",
        "submission_data": "http://127.0.0.1/lti/launch",
        "submitted_at": stamp(),
    }
    body = score(scoreGiven=0.5, scoreMaximum=1, **{CANVAS: extension})
    assert post_score(demo, item, body, auth).status_code == 200
    assert demo.platform.scores()[0].body[CANVAS] == extension
    results = requests.get(demo.platform.lineitem_url(item) + "/results", headers=auth, timeout=5)
    assert results.json()[0]["resultScore"] == 5.0


def test_a_progress_only_score_needs_no_points(
    demo: DemoServer, item: LineItem, auth: dict[str, str]
) -> None:
    body = score(
        scoreGiven=None, scoreMaximum=None, activityProgress="Started", gradingProgress="NotReady"
    )
    assert post_score(demo, item, body, auth).status_code == 200


BAD_SCORES: list[tuple[str, object, str]] = [
    ("not an object", [score()], "JSON object"),
    ("no userId", score(userId=None), "userId"),
    ("unknown user", score(userId="demo-zed"), "not a member"),
    ("numeric userId", score(userId=42), "userId"),
    ("no activityProgress", score(activityProgress=None), "activityProgress"),
    ("bad activityProgress", score(activityProgress="Done"), "activityProgress"),
    ("no gradingProgress", score(gradingProgress=None), "gradingProgress"),
    ("bad gradingProgress", score(gradingProgress="Graded"), "gradingProgress"),
    ("no timestamp", score(timestamp=None), "timestamp"),
    ("naive timestamp", score(timestamp="2026-01-01T10:00:00"), "UTC offset"),
    ("not a timestamp", score(timestamp="yesterday"), "timestamp"),
    ("above maximum", score(scoreGiven=11), "from 0 to scoreMaximum"),
    ("negative", score(scoreGiven=-1), "from 0 to scoreMaximum"),
    ("points as text", score(scoreGiven="7"), "from 0 to scoreMaximum"),
    ("points as bool", score(scoreGiven=True), "from 0 to scoreMaximum"),
    ("given without maximum", score(scoreMaximum=None), "scoreMaximum is required"),
    ("zero maximum", score(scoreGiven=0, scoreMaximum=0), "above 0"),
    ("comment not text", score(comment=5), "comment"),
    ("canvas not object", score(**{CANVAS: "yes"}), CANVAS),
    ("canvas bad flag", score(**{CANVAS: {"new_submission": "yes"}}), "new_submission"),
    ("canvas bad date", score(**{CANVAS: {"submitted_at": "today"}}), "submitted_at"),
]


@pytest.mark.parametrize(
    "body, message", [b[1:] for b in BAD_SCORES], ids=[b[0] for b in BAD_SCORES]
)
def test_a_malformed_score_is_refused(
    demo: DemoServer, item: LineItem, auth: dict[str, str], body: object, message: str
) -> None:
    answer = post_score(demo, item, body, auth)
    assert answer.status_code == 400
    assert message in answer.json()["error_description"]
    assert demo.platform.scores() == []


@pytest.mark.parametrize("content_type", ["application/json", "text/plain", LINEITEM_TYPE])
def test_a_score_needs_its_content_type(
    demo: DemoServer, item: LineItem, auth: dict[str, str], content_type: str
) -> None:
    answer = post_score(demo, item, score(), auth, content_type)
    assert answer.status_code == 415 and SCORE_TYPE in answer.json()["error_description"]


def test_a_read_only_token_cannot_post_scores(
    demo: DemoServer, tool: FakeTool, item: LineItem
) -> None:
    auth = {"Authorization": f"Bearer {tool.access_token(demo.platform, READ_ONLY)}"}
    answer = post_score(demo, item, score(), auth)
    assert answer.status_code == 403
    assert answer.json()["error"] == "insufficient_scope"
    assert post_score(demo, item, score(), {}).status_code == 401
    assert demo.platform.scores() == []


def refusal(item: LineItem, user: str = "demo-ali") -> str:
    return f"Refusing score with an earlier timestamp for item {item.id} and user {user}"


def results_of(demo: DemoServer, item: LineItem, auth: dict[str, str]) -> list[dict[str, Any]]:
    url = demo.platform.lineitem_url(item) + "/results"
    answer: list[dict[str, Any]] = requests.get(url, headers=auth, timeout=5).json()
    return answer


def test_a_second_score_in_the_same_second_is_refused_and_the_first_kept(
    demo: DemoServer, item: LineItem, auth: dict[str, str]
) -> None:
    first = post_score(demo, item, score(scoreGiven=3, timestamp=at(0.1)), auth)
    assert first.status_code == 200, first.text
    second = post_score(demo, item, score(scoreGiven=9, timestamp=at(0.9)), auth)
    assert second.status_code == 409
    assert second.json()["error_description"] == refusal(item)
    assert [(s.body["scoreGiven"], s.applied) for s in demo.platform.scores()] == [
        (3, True),
        (9, False),
    ]
    assert demo.platform.gradebook()[("demo-ali", item.id)].body["scoreGiven"] == 3
    assert [r["resultScore"] for r in results_of(demo, item, auth)] == [3]


# Moodle compares strtotime() values: whole seconds, the fraction dropped.
ORDERINGS = [
    ("same second", at(0.1), at(0.9), 409),
    ("same instant, a retry", at(0.5), at(0.5), 409),
    ("earlier second", at(5), at(1), 409),
    (
        "same second, other offset",
        "2026-05-01T10:00:00.1+00:00",
        "2026-05-01T12:00:00.9+02:00",
        409,
    ),
    ("next second by a millisecond", at(0.999), at(1.0), 200),
    ("a minute later", at(0), at(60), 200),
]


@pytest.mark.parametrize(
    "first, second, status", [o[1:] for o in ORDERINGS], ids=[o[0] for o in ORDERINGS]
)
def test_a_score_must_be_a_later_whole_second_than_the_grade_held(
    demo: DemoServer,
    item: LineItem,
    auth: dict[str, str],
    first: str,
    second: str,
    status: int,
) -> None:
    assert post_score(demo, item, score(scoreGiven=3, timestamp=first), auth).status_code == 200
    answer = post_score(demo, item, score(scoreGiven=9, timestamp=second), auth)
    assert answer.status_code == status
    held = demo.platform.gradebook()[("demo-ali", item.id)]
    assert held.body["scoreGiven"] == (9 if status == 200 else 3)
    assert len(demo.platform.scores()) == 2  # a refused score is kept, for the gradebook page


def test_a_refusal_counts_only_applied_scores_of_the_same_user(
    demo: DemoServer, item: LineItem, auth: dict[str, str]
) -> None:
    assert post_score(demo, item, score(timestamp=at(10)), auth).status_code == 200
    assert post_score(demo, item, score(timestamp=at(5)), auth).status_code == 409
    # the refused score at 00:05 is no grade held: 00:06 is still earlier than 00:10
    assert post_score(demo, item, score(timestamp=at(6)), auth).status_code == 409
    assert post_score(demo, item, score(timestamp=at(11)), auth).status_code == 200
    berna = score(userId="demo-berna", timestamp=at(10))
    assert post_score(demo, item, berna, auth).status_code == 200


def test_concurrent_scores_in_one_second_let_exactly_one_win(
    demo: DemoServer, item: LineItem, auth: dict[str, str]
) -> None:
    bodies = [score(scoreGiven=n, timestamp=at(n / 10)) for n in range(8)]
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda b: post_score(demo, item, b, auth), bodies))
    assert sorted(a.status_code for a in answers) == [200] + [409] * 7
    [winner] = [b for b, a in zip(bodies, answers, strict=True) if a.status_code == 200]
    kept = demo.platform.scores()
    assert len(kept) == 8 and [s.body for s in kept if s.applied] == [winner]
    assert demo.platform.gradebook()[("demo-ali", item.id)].body == winner


def test_concurrent_scores_of_different_people_are_all_applied(
    demo: DemoServer, item: LineItem, auth: dict[str, str]
) -> None:
    users = ["demo-ali", "demo-berna", "demo-can", "demo-ada"]
    with ThreadPoolExecutor(4) as pool:
        answers = list(
            pool.map(
                lambda u: post_score(demo, item, score(userId=u, timestamp=at(0)), auth), users
            )
        )
    assert {a.status_code for a in answers} == {200}
    assert {user for user, _ in demo.platform.gradebook()} == set(users)


@pytest.mark.parametrize("progress", ["Pending", "PendingManual", "Failed", "NotReady"])
def test_a_score_not_fully_graded_blanks_the_points_held(
    demo: DemoServer, item: LineItem, auth: dict[str, str], progress: str
) -> None:
    gradebook = demo.app.test_client()
    assert post_score(demo, item, score(scoreGiven=7, timestamp=at(0)), auth).status_code == 200
    assert [r["resultScore"] for r in results_of(demo, item, auth)] == [7]
    assert "<strong>7</strong>" in gradebook.get("/demo/gradebook").get_data(as_text=True)
    blanking = score(scoreGiven=8, gradingProgress=progress, timestamp=at(1))
    assert post_score(demo, item, blanking, auth).status_code == 200
    [result] = results_of(demo, item, auth)
    assert result["userId"] == "demo-ali" and "resultScore" not in result
    assert demo.platform.scores()[-1].body == blanking  # kept as the tool sent it
    page = gradebook.get("/demo/gradebook").get_data(as_text=True)
    assert "<strong>7</strong>" not in page and "<strong>8</strong>" not in page
    assert '<span title="no points held">-</span>' in page
    assert "the grade is now blank" in page
    assert post_score(demo, item, score(scoreGiven=8, timestamp=at(2)), auth).status_code == 200
    assert [r["resultScore"] for r in results_of(demo, item, auth)] == [8]


def test_line_items_can_be_created_read_updated_and_deleted(
    demo: DemoServer, registered: Tool, auth: dict[str, str]
) -> None:
    link = demo.platform.add_link(registered.client_id, "Lesson")
    container = demo.platform.lineitems_url("demo-course-1")
    new = {
        "scoreMaximum": 20,
        "label": "Quiz",
        "resourceId": "quiz-1",
        "tag": "quiz",
        "resourceLinkId": link.id,
    }
    typed = {**auth, "Content-Type": LINEITEM_TYPE}
    created = requests.post(container, data=json.dumps(new), headers=typed, timeout=5)
    assert created.status_code == 201
    assert created.headers["Content-Type"] == LINEITEM_TYPE
    url = created.json()["id"]
    assert created.json() == {**new, "id": url}

    listed = requests.get(container, params={"resource_id": "quiz-1"}, headers=auth, timeout=5)
    assert listed.headers["Content-Type"] == "application/vnd.ims.lis.v2.lineitemcontainer+json"
    assert [i["id"] for i in listed.json()] == [url]
    none = requests.get(container, params={"tag": "other"}, headers=auth, timeout=5)
    assert none.json() == []

    changed = requests.put(
        url, data=json.dumps({**new, "label": "Quiz 1"}), headers=typed, timeout=5
    )
    assert changed.json()["label"] == "Quiz 1"
    assert requests.get(url, headers=auth, timeout=5).json()["label"] == "Quiz 1"
    assert requests.delete(url, headers=auth, timeout=5).status_code == 204
    assert requests.get(url, headers=auth, timeout=5).status_code == 404


@pytest.mark.parametrize(
    "body, status, message",
    [
        ({"label": "Quiz", "scoreMaximum": 0}, 400, "scoreMaximum"),
        ({"label": "", "scoreMaximum": 5}, 400, "label"),
        ({"label": "Quiz", "scoreMaximum": 5, "resourceLinkId": "rl-nope"}, 400, "resourceLinkId"),
        ({"label": "Quiz", "scoreMaximum": 5, "endDateTime": "soon"}, 400, "endDateTime"),
    ],
)
def test_a_bad_line_item_is_refused(
    demo: DemoServer, auth: dict[str, str], body: dict[str, Any], status: int, message: str
) -> None:
    answer = requests.post(
        demo.platform.lineitems_url("demo-course-1"),
        data=json.dumps(body),
        headers={**auth, "Content-Type": LINEITEM_TYPE},
        timeout=5,
    )
    assert answer.status_code == status and message in answer.json()["error_description"]


def test_line_item_writes_need_the_lineitem_scope(
    demo: DemoServer, tool: FakeTool, item: LineItem
) -> None:
    auth = {"Authorization": f"Bearer {tool.access_token(demo.platform, READ_ONLY)}"}
    url = demo.platform.lineitem_url(item)
    assert requests.get(url, headers=auth, timeout=5).status_code == 200
    assert requests.delete(url, headers=auth, timeout=5).status_code == 403
    wrong_type = requests.post(
        demo.platform.lineitems_url("demo-course-1"),
        json={"label": "x", "scoreMaximum": 1},
        headers={"Authorization": f"Bearer {tool.access_token(demo.platform, ALL_AGS)}"},
        timeout=5,
    )
    assert wrong_type.status_code == 415


def test_a_tool_sees_only_its_own_line_items(
    demo: DemoServer, tool: FakeTool, item: LineItem
) -> None:
    tool.register_with(demo.platform)  # a second registration: another client id
    auth = {"Authorization": f"Bearer {tool.access_token(demo.platform, ALL_AGS)}"}
    assert (
        requests.get(demo.platform.lineitem_url(item), headers=auth, timeout=5).status_code == 404
    )
    listed = requests.get(demo.platform.lineitems_url("demo-course-1"), headers=auth, timeout=5)
    assert listed.json() == []
    assert post_score(demo, item, score(), auth).status_code == 404


def test_service_urls_can_carry_a_query_like_moodle(state_dir: Path, tool: FakeTool) -> None:
    with DemoServer(state_dir, service_url_query="type_id=1") as demo:
        registered = tool.register_with(demo.platform)
        link = demo.platform.add_link(registered.client_id, "Lesson", score_maximum=5)
        [item] = demo.platform.lineitems_of(link)
        assert demo.platform.lineitem_url(item).endswith(f"/lineitems/{item.id}?type_id=1")
        auth = {"Authorization": f"Bearer {tool.access_token(demo.platform, ALL_AGS)}"}
        assert post_score(demo, item, score(scoreMaximum=5, scoreGiven=5), auth).status_code == 200
