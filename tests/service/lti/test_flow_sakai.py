"""The real tool against the demo LMS playing Sakai: the score scope depends on two admin
checkboxes; without both, the tool says plainly that this LMS cannot take grades."""

import pytest
import requests

from service.lti.line_items import NO_SCORE_SCOPE
from testkit.lms import lms_with_a_worker
from tests.service.lti.lms_trials import (
    deep_link,
    landed,
    register_dynamically,
    settled_syncs,
    submit_the_solution,
    teacher_sees_the_teacher_view,
)

pytestmark = [pytest.mark.celery, pytest.mark.slow]
OPTIONS = {"personality": "sakai"}


@pytest.fixture
def lms(tmp_path, redis_server):
    with lms_with_a_worker(tmp_path, redis_server, "grade,sync", OPTIONS) as found:
        yield found


def test_with_both_boxes_ticked_the_whole_flow_grades(lms):
    lms.platform.tick(lms.client_id, outcomes=True, lineitems=True)
    with requests.Session() as browser:
        new = register_dynamically(lms, browser)
        assert new.deployment_ids == ("1",)  # Sakai's registration answer names it
        [linked], _ = deep_link(lms, browser)
        teacher_sees_the_teacher_view(lms, browser, linked)
    _, submission = submit_the_solution(lms, "ali", linked)
    assert submission["status"] == "graded"
    score = landed(lms, "ali")
    assert score.body["scoreGiven"] > 0


def test_without_the_score_scope_the_grade_is_plainly_not_sendable(lms):
    # "return grades" ticked, "create grade columns" not: the launch has the URLs, the token
    # endpoint refuses the score scope (400 invalid_scope)
    lms.platform.tick(lms.client_id, outcomes=True, lineitems=False)
    link = lms.link()
    placement_id, submission = submit_the_solution(lms, "ali", link)
    assert submission["status"] == "graded"  # the student still has their verdict
    [sync] = settled_syncs(lms, placement_id)
    assert sync.status == "failed" and sync.attempts == 1  # no hopeless retries
    assert NO_SCORE_SCOPE in (sync.last_error or "")
    assert lms.platform.scores() == []
    assert lms.platform.knobs.hits["token"] == 1
