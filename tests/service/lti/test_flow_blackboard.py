"""The real tool against the demo LMS playing Blackboard Learn: one issuer for every site,
and a gradebook column only for a deep-linked item that carries a lineItem."""

import pytest
import requests

from service.lti import registration
from testkit.lms import lms_with_a_worker
from tests.service.lti.lms_trials import (
    SEED,
    deep_link,
    landed,
    line_item_of,
    submit_the_solution,
    teacher_sees_the_teacher_view,
)

pytestmark = [pytest.mark.celery, pytest.mark.slow]
OPTIONS = {"personality": "blackboard"}


@pytest.fixture
def lms(tmp_path, redis_server):
    with lms_with_a_worker(tmp_path, redis_server, "grade,sync", OPTIONS) as found:
        yield found


def test_the_whole_flow_grades_into_the_deep_linked_column(lms):
    # registered by client id, as a Learn admin does (Learn has no dynamic registration)
    [platform] = registration.list_platforms(lms.store)
    assert platform.issuer == "https://blackboard.com"  # the one issuer of every Learn site
    with requests.Session() as browser:
        [linked], items = deep_link(lms, browser)
        # without it Blackboard makes an ungraded web link
        line_item = items[0]["lineItem"]
        assert line_item["scoreMaximum"] == 8.0 and line_item["label"]
        [column] = lms.platform.lineitems_of(linked)
        teacher_sees_the_teacher_view(lms, browser, linked)
    placement_id, submission = submit_the_solution(lms, "ali", linked)
    assert submission["status"] == "graded"
    score = landed(lms, "ali")
    assert score.lineitem_id == column.id and score.body["scoreGiven"] > 0
    assert line_item_of(lms, placement_id) == lms.platform.lineitem_url(column)
    assert len(lms.platform.lineitems()) == 1  # no second column made


def test_a_link_made_without_a_line_item_gets_one_from_the_tool(lms):
    # another tool's deep linking, or an admin's, left no lineItem: a column-less link
    bare = lms.platform.add_link(lms.client_id, "Web link", custom={"lesson": SEED})
    assert lms.platform.lineitems_of(bare) == []
    placement_id, _ = submit_the_solution(lms, "berna", bare)
    score = landed(lms, "berna")
    [made] = lms.platform.lineitems_of(bare)
    assert score.lineitem_id == made.id and made.resource_link_id == bare.id
    assert line_item_of(lms, placement_id) == lms.platform.lineitem_url(made)
