"""Submission review, platform side: line items keep `submissionReview`, and the gradebook's
per-student link sends an LtiSubmissionReviewRequest as Moodle's does (FINDINGS.md)."""

import json
from typing import Any

import pytest
import requests

from demo import DemoError, DemoServer, LineItem, Tool, run_launch
from tests.demo.fake_tool import LTI, FakeTool
from tests.demo.scores import LINEITEM_TYPE

REVIEW = {
    "reviewableStatus": ["Completed"],
    "label": "Open the attempts",
    "url": "http://127.0.0.1:9/lti/review",
}


def create(demo: DemoServer, auth: dict[str, str], **fields: Any) -> requests.Response:
    return requests.post(
        demo.platform.lineitems_url("demo-course-1"),
        data=json.dumps({"label": "Quiz", "scoreMaximum": 5, **fields}),
        headers={**auth, "Content-Type": LINEITEM_TYPE},
        timeout=5,
    )


def test_a_line_item_keeps_its_submission_review(
    demo: DemoServer, registered: Tool, auth: dict[str, str]
) -> None:
    link = demo.platform.add_link(registered.client_id, "Lesson")
    created = create(demo, auth, resourceLinkId=link.id, submissionReview=REVIEW)
    assert created.status_code == 201, created.text
    assert created.json()["submissionReview"] == REVIEW
    assert (
        requests.get(created.json()["id"], headers=auth, timeout=5).json()["submissionReview"]
        == REVIEW
    )
    [item] = demo.platform.lineitems_of(link)
    assert item.submission_review == REVIEW


@pytest.mark.parametrize(
    "review, message",
    [
        ("yes", "submissionReview must be an object"),
        ({}, "reviewableStatus must be a list"),
        ({"reviewableStatus": "Completed"}, "reviewableStatus must be a list"),
        ({"reviewableStatus": [], "url": "javascript:alert(1)"}, "url must be an http(s) URL"),
        ({"reviewableStatus": [], "label": 7}, "label must be a string"),
        ({"reviewableStatus": [], "custom": {"a": 1}}, "custom must map names to strings"),
    ],
)
def test_a_malformed_submission_review_is_refused(
    demo: DemoServer, auth: dict[str, str], review: object, message: str
) -> None:
    answer = create(demo, auth, submissionReview=review)
    assert answer.status_code == 400 and message in answer.json()["error_description"]
    assert demo.platform.lineitems() == []


def test_the_gradebook_link_sends_a_review_to_the_declared_url(
    demo: DemoServer, tool: FakeTool, registered: Tool, auth: dict[str, str]
) -> None:
    link = demo.platform.add_link(registered.client_id, "Lesson")
    url = tool.launch_url.replace("/launch", "/review")
    assert create(demo, auth, resourceLinkId=link.id, submissionReview={**REVIEW, "url": url})
    initiation = demo.platform.review("ada", link.id, "ali")
    assert initiation.params["target_link_uri"] == url
    trace = run_launch(requests.Session(), initiation)
    claims = trace.form.claims
    assert claims[LTI + "message_type"] == "LtiSubmissionReviewRequest"
    assert claims[LTI + "target_link_uri"] == url
    assert claims["sub"] == "demo-ada"
    assert claims[LTI + "for_user"] == {
        "user_id": "demo-ali",
        "given_name": "Ali",
        "family_name": "Student",
        "name": "Ali Student",
        "email": "ali.student@example.com",
        "roles": ["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"],
    }
    [item] = demo.platform.lineitems_of(link)
    ags = claims["https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"]
    assert ags["lineitem"] == demo.platform.lineitem_url(item)
    assert claims[LTI + "resource_link"]["id"] == link.id


def test_without_a_declared_url_the_review_goes_to_the_links_own(
    demo: DemoServer, tool: FakeTool, registered: Tool, item: LineItem
) -> None:
    initiation = demo.platform.review("ada", item.resource_link_id or "", "berna")
    assert initiation.params["target_link_uri"] == tool.launch_url
    claims = run_launch(requests.Session(), initiation).form.claims
    assert claims[LTI + "message_type"] == "LtiSubmissionReviewRequest"
    assert claims[LTI + "for_user"]["user_id"] == "demo-berna"


def test_a_review_is_a_teachers_or_ones_own(demo: DemoServer, item: LineItem) -> None:
    link_id = item.resource_link_id or ""
    assert demo.platform.review("ali", link_id, "ali").params["target_link_uri"]
    with pytest.raises(DemoError, match="only an instructor"):
        demo.platform.review("ali", link_id, "berna")
    with pytest.raises(DemoError, match="no user"):
        demo.platform.review("ada", link_id, "zed")


def test_a_link_without_a_grade_column_has_no_review(demo: DemoServer, registered: Tool) -> None:
    link = demo.platform.add_link(registered.client_id, "Ungraded")
    with pytest.raises(DemoError, match="no grade column"):
        demo.platform.review("ada", link.id, "ali")


def test_the_gradebook_page_links_each_students_review(demo: DemoServer, item: LineItem) -> None:
    page = requests.get(f"{demo.url}/demo/gradebook", timeout=5)
    assert page.status_code == 200
    assert "Review Ali&#39;s work" in page.text or "Review Ali's work" in page.text
    frame = requests.get(
        f"{demo.url}/demo/review/{item.resource_link_id}",
        params={"user": "demo-ada", "for": "demo-ali"},
        timeout=5,
    )
    assert frame.status_code == 200 and "Submission review as Ada Teacher" in frame.text
    assert "for_user=demo-ali" in frame.text
