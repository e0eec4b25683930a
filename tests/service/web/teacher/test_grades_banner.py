"""A teacher's pages say when their course's LMS cannot take grades, before a student hands
in: from what the course's launches lacked (no AGS claim), and from the platform's latest
self-test."""

import html
import re
from urllib.parse import urljoin

import pytest
import requests

from demo.browser import run_launch
from demo.tokens import MEMBERSHIPS
from service.lti import self_test
from service.store.models import Platform
from testkit.lms import make_lms
from tests.service.lti.test_self_test import platform_id, reregister
from tests.service.sessions import text_of

NO_AGS = "This course's LMS cannot take grades: its launches carry no grade service."
BLOCKED = "This course's LMS cannot take grades now: the tool's self-test found a problem"


@pytest.fixture
def lms(tmp_path):
    found, tool_server = make_lms(tmp_path, fake_celery=True)
    yield found
    found.demo.stop()
    tool_server.stop()
    found.store.dispose()


def teacher_pages(lms, link):
    """Launch as the teacher; return the texts of the lesson's page and the gradebook."""
    with requests.Session() as browser:
        trace = run_launch(browser, lms.platform.launch("ada", link.id))
        url = urljoin(trace.launch.url, trace.launch.headers["Location"])
        placement = browser.get(url, timeout=30)
        course = re.search(r'href="([^"]*/courses/\d+\?[^"]*)"', placement.text).group(1)
        gradebook = browser.get(urljoin(url, html.unescape(course)), timeout=30)
        assert gradebook.status_code == 200
    return text_of(placement.text), text_of(gradebook.text)


def test_launches_without_a_grade_service_show_the_banner(lms):
    reregister(lms, scopes=[MEMBERSHIPS])  # the LMS sends no AGS claim
    placement, gradebook = teacher_pages(lms, lms.link())
    assert NO_AGS in placement
    assert NO_AGS in gradebook


def test_a_self_test_that_found_a_blocking_trap_shows_the_banner(lms):
    link = lms.link()
    placement, _ = teacher_pages(lms, link)
    assert NO_AGS not in placement and BLOCKED not in placement
    lms.platform.fail("ags", times=1)
    assert not self_test.run(lms.lti, platform_id(lms)).grades_ok
    placement, gradebook = teacher_pages(lms, link)
    assert BLOCKED in placement and BLOCKED in gradebook
    assert self_test.run(lms.lti, platform_id(lms)).grades_ok  # fixed: the banner goes
    placement, _ = teacher_pages(lms, link)
    assert BLOCKED not in placement


def test_no_banner_for_a_platform_never_tested(lms):
    with lms.store.session() as session:
        assert session.query(Platform).count() == 1
    placement, gradebook = teacher_pages(lms, lms.link())
    assert NO_AGS not in gradebook and BLOCKED not in gradebook
