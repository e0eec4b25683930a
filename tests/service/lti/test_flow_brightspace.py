"""The real tool against the demo LMS playing Brightspace: its links carry no line item, so
the tool makes one (only one, however many students post at once) and grades go there."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import timedelta

import pytest
import requests

from core.lesson_scores import LessonScore
from core.platforms import ScorePost
from service.lti.ags import AgsPoster
from service.store.models import utcnow
from testkit.lms import lms_with_a_worker, make_lms, signed_in_headers
from testkit.stacks import poll
from tests.service.lti.lms_trials import (
    SEED,
    deep_link,
    line_item_of,
    register_dynamically,
    submit_the_solution,
    teacher_sees_the_teacher_view,
)

pytestmark = [pytest.mark.celery, pytest.mark.slow]
OPTIONS = {"personality": "brightspace"}


@pytest.fixture
def lms(tmp_path, redis_server):
    with lms_with_a_worker(tmp_path, redis_server, "grade,sync", OPTIONS) as found:
        yield found


def test_the_whole_flow_makes_the_grade_item_the_link_lacks(lms):
    with requests.Session() as browser:
        new = register_dynamically(lms, browser)
        # its configuration's authorization_server: the aud every token request must carry
        assert new.token_audience == "https://api.brightspace.com/auth/token"
        assert new.auth_token_url == lms.platform.token_url != new.token_audience
        # from here on, the tool as Brightspace registered it
        lms = replace(lms, client_id=new.client_id, deployment_id=new.deployment_ids[0])
        [linked], items = deep_link(lms, browser)
        assert items[0]["lineItem"]["scoreMaximum"] == 8.0  # D2L makes its grade item from it
        assert lms.platform.lineitems_of(linked)
        teacher_sees_the_teacher_view(lms, browser, linked)
    # a link placed by hand (a Brightspace quicklink): no grade item, no lineitem at launch
    placed = lms.link(title="By hand", score=8.0)  # Moodle makes its grade item here
    assert lms.platform.lineitems_of(placed) == []
    placement_id, submission = submit_the_solution(lms, "ali", placed)
    assert submission["status"] == "graded"  # the student has their verdict
    # the tool made it, bound to the link (the self-test of the new registration, which now
    # has a course, may post ali a score of its own on its throwaway item: not this one)
    [made] = poll(lambda: lms.platform.lineitems_of(placed), bool, "the line item of the link")
    poll(
        lambda: [s for s in lms.platform.scores(made.id, user="ali") if s.applied],
        bool,
        "ali's score on the link's line item",
    )
    assert (made.resource_link_id, made.tag, made.score_maximum) == (placed.id, "codeblanks", 8.0)
    assert line_item_of(lms, placement_id) == lms.platform.lineitem_url(made)
    assert made.client_id == new.client_id  # made and graded with the registered audience


def test_launches_make_the_grade_item_before_anyone_hands_in(lms):
    placed = lms.link(title="By hand", score=8.0)

    def launch(who):
        with requests.Session() as browser:
            return signed_in_headers(browser, lms, who, placed)[1]

    with ThreadPoolExecutor(2) as pool:  # two students open it at once
        placement_id, same = pool.map(launch, ["ali", "berna"])
    assert placement_id == same
    poll(
        lambda: (len(lms.platform.lineitems_of(placed)), line_item_of(lms, placement_id)),
        lambda found: found[0] == 1 and found[1] is not None,
        "the line item made at launch",
    )
    time.sleep(1)  # a second maker, had there been one, deletes its own by now
    [made] = lms.platform.lineitems_of(placed)
    assert line_item_of(lms, placement_id) == lms.platform.lineitem_url(made)
    assert (made.resource_link_id, made.score_maximum) == (placed.id, 8.0)
    assert lms.platform.scores(made.id) == []  # made before any grade


def test_two_posts_at_once_leave_one_line_item_with_both_scores(tmp_path):
    lms, server = make_lms(tmp_path, personality="brightspace")
    try:
        link = lms.platform.add_link(lms.client_id, "By hand", custom={"lesson": SEED})
        with requests.Session() as browser:
            _, placement_id = signed_in_headers(browser, lms, "ali", link)
        # both posts look for the link's line item before either makes one: the race
        both_looked = threading.Barrier(2, timeout=10)
        app = lms.demo.app.wsgi_app

        def racing(environ, start_response):
            if environ["REQUEST_METHOD"] == "GET" and "resource_link_id" in environ.get(
                "QUERY_STRING", ""
            ):
                both_looked.wait()
            return app(environ, start_response)

        lms.demo.app.wsgi_app = racing
        poster = AgsPoster(lms.lti)

        def post(who):
            return poster.post(
                ScorePost(
                    platform_id=1,
                    line_item_url="",
                    user_sub=lms.platform.user_sub(who),
                    score=LessonScore(3.0, 8.0),
                    timestamp=utcnow() - timedelta(seconds=1),
                    line_items_url=lms.platform.lineitems_url("demo-course-1"),
                    resource_link_id=link.id,
                    resource_id=SEED,
                    label="By hand",
                    placement_id=placement_id,
                )
            )

        with ThreadPoolExecutor(2) as pool:
            posted = list(pool.map(post, ["ali", "berna"]))
        [kept] = lms.platform.lineitems_of(link)  # the old code left two
        assert {p.line_item_url for p in posted} == {lms.platform.lineitem_url(kept)}
        assert {s.lineitem_id for s in lms.platform.scores()} == {kept.id}
        assert line_item_of(lms, placement_id) == lms.platform.lineitem_url(kept)
    finally:
        lms.demo.stop()
        server.stop()
        lms.store.dispose()
