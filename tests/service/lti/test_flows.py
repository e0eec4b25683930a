"""Full LTI flows over real HTTP between the tool and the independent demo platform."""

import html
import re
import time
from urllib.parse import urljoin, urlsplit

import jwt
import requests
from sqlalchemy import select

from demo.browser import parse_form, run_launch
from service.lti import registration
from service.lti.ags import AgsPoster
from service.lti.roster import sync_roster
from service.store.models import Course, GradeSync, Membership, Placement, Platform, User, utcnow
from service.store.platform_rows import PlatformFields
from testkit.lms import answer, make_lms, signed_in_headers
from workers.syncing import Synced, sync_pair

SEED = "expert/what-is-attention"


def picker_form(page):
    """Return a picker page's form action and its CSRF token."""
    action = re.search(r'action="([^"]+)"', page).group(1).replace("&amp;", "&")
    return action, html.unescape(re.search(r'name="csrf" value="([^"]+)"', page).group(1))


def follow(browser, response):
    """Follow one redirect of the tool, as a browser would."""
    assert response.status_code in (302, 303), (response.status_code, response.text[:500])
    return browser.get(urljoin(response.url, response.headers["Location"]), timeout=10)


def test_student_launch_opens_the_placed_lesson(lms, browser):
    link = lms.link()
    trace = run_launch(browser, lms.platform.launch("ali", link.id))
    assert urlsplit(trace.launch.headers["Location"]).path.startswith("/lessons/")
    page = follow(browser, trace.launch)
    assert page.status_code == 200 and "What is attention?" in page.text
    with lms.store.session() as session:
        user = session.scalar(select(User))
        placement = session.scalar(select(Placement))
        membership = session.scalar(select(Membership))
        course = session.scalar(select(Course))
    assert user.sub == lms.platform.user_sub("ali") and user.name
    assert placement.lesson_id == SEED and placement.resource_link_id == link.id
    assert placement.line_item_url and "lineitems" in placement.line_item_url
    assert course.line_items_url and course.memberships_url
    assert membership.teacher is False


def test_teacher_launch_opens_the_teacher_view(lms, browser):
    link = lms.link()
    trace = run_launch(browser, lms.platform.launch("ada", link.id))
    assert "/teach/placements/" in trace.launch.headers["Location"]
    assert follow(browser, trace.launch).status_code == 200


def test_moodle_style_post_login_works(tmp_path, browser):
    lms, server = make_lms(tmp_path, login_method="POST", service_url_query="type_id=1")
    try:
        trace = run_launch(browser, lms.platform.launch("ali", lms.link().id))
        assert follow(browser, trace.launch).status_code == 200
    finally:
        lms.demo.stop()
        server.stop()


def test_teachers_first_click_picks_the_lesson_and_students_wait(lms, browser):
    link = lms.link(lesson=None)
    student = run_launch(browser, lms.platform.launch("berna", link.id))
    assert student.launch.status_code == 200 and "not set up yet" in student.launch.text
    with lms.store.session() as session:
        assert session.scalar(select(Placement)) is None
    teacher = run_launch(browser, lms.platform.launch("ada", link.id))
    assert teacher.launch.status_code == 200 and "Choose the lesson" in teacher.launch.text
    action, token = picker_form(teacher.launch.text)
    chosen = browser.post(
        urljoin(lms.tool_url, action), data={"lesson": SEED, "csrf": token}, allow_redirects=False
    )
    assert "/teach/placements/" in chosen.headers["Location"]
    with lms.store.session() as session:
        assert session.scalar(select(Placement)).lesson_id == SEED
    again = run_launch(browser, lms.platform.launch("berna", link.id))
    assert "/lessons/" in again.launch.headers["Location"]


def test_the_pickers_refuse_a_post_without_the_pages_token(lms, browser):
    link = lms.link(lesson=None)
    teacher = run_launch(browser, lms.platform.launch("ada", link.id))
    action, token = picker_form(teacher.launch.text)
    bare = urljoin(lms.tool_url, urlsplit(action).path + f"?link={link.id}")
    # another site's form: the teacher's cookie comes along, the page's token does not
    for url, data in [(bare, {"lesson": SEED}), (urljoin(lms.tool_url, action), {"lesson": SEED})]:
        forged = browser.post(url, data=data, allow_redirects=False)
        assert forged.status_code == 400 and "security token" in forged.text
    with lms.store.session() as session:
        assert session.scalar(select(Placement)) is None
    deep = run_launch(browser, lms.platform.deep_link("ada", lms.client_id))
    deep_action, _ = picker_form(deep.launch.text)
    forged = browser.post(urljoin(lms.tool_url, urlsplit(deep_action).path), data={"lesson": SEED})
    assert forged.status_code == 400 and "JWT" not in forged.text


def test_picker_refusals_are_pages_not_errors(lms, browser):
    link = lms.link(lesson=None)
    teacher = run_launch(browser, lms.platform.launch("ada", link.id))
    action, token = picker_form(teacher.launch.text)
    unknown = browser.post(urljoin(lms.tool_url, action), data={"lesson": "no/such", "csrf": token})
    assert unknown.status_code == 400 and "Unknown lesson" in unknown.text
    deep = run_launch(browser, lms.platform.deep_link("ada", lms.client_id))
    deep_action, deep_token = picker_form(deep.launch.text)
    nothing = browser.post(urljoin(lms.tool_url, deep_action), data={"csrf": deep_token})
    assert nothing.status_code == 400 and "Nothing picked" in nothing.text


def test_deep_linking_round_trip_places_lessons_with_line_items(lms, browser):
    before = {link.id for link in lms.platform.links()}
    trace = run_launch(browser, lms.platform.deep_link("ada", lms.client_id))
    assert trace.launch.status_code == 200 and "Add lessons to your course" in trace.launch.text
    action, token = picker_form(trace.launch.text)
    picked = browser.post(
        urljoin(lms.tool_url, action),
        data={"lesson": [SEED, "expert/causal-masking"], "csrf": token},
        allow_redirects=False,
    )
    assert picked.status_code == 200
    form = parse_form(picked.text, lms.tool_url)
    claims = jwt.decode(form.fields["JWT"], options={"verify_signature": False})
    items = claims["https://purl.imsglobal.org/spec/lti-dl/claim/content_items"]
    assert [i["custom"]["lesson"] for i in items] == [SEED, "expert/causal-masking"]
    assert (
        items[0]["lineItem"]["scoreMaximum"] == 8.0 and items[0]["lineItem"]["resourceId"] == SEED
    )
    returned = browser.post(form.action, data=form.fields, timeout=10)
    assert returned.status_code == 200, returned.text[:500]
    new = [link for link in lms.platform.links() if link.id not in before]
    assert [link.custom["lesson"] for link in new] == [SEED, "expert/causal-masking"]
    assert all(lms.platform.lineitems_of(link)[0].score_maximum == 8.0 for link in new)
    student = run_launch(browser, lms.platform.launch("ali", new[0].id))
    assert "/lessons/" in student.launch.headers["Location"]


def test_answers_reach_the_platform_gradebook_with_the_right_fields(lms, browser):
    link = lms.link()
    headers, placement_id = signed_in_headers(browser, lms, "ali", link)
    fresh = requests.Session()  # no cookies: the header alone signs in
    answered = answer(fresh, lms, headers, placement_id)
    assert answered.status_code == 201, answered.text
    with lms.store.session() as session:
        user_id = session.scalar(select(User.id))
    poster = AgsPoster(lms.lti)
    result = sync_pair(lms.store, lms.lti.catalog, poster, user_id, placement_id, 3)
    assert result.outcome is Synced.SENT, _debug_last_error(lms)
    [score] = lms.platform.scores(user="ali")
    assert score.applied
    body = score.body
    assert body["userId"] == lms.platform.user_sub("ali")
    assert body["scoreGiven"] == 1.0 and body["scoreMaximum"] == 8.0
    assert body["activityProgress"] == "Completed" and body["gradingProgress"] == "FullyGraded"
    # whole seconds: the resolution Moodle compares timestamps at
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$", body["timestamp"])


def test_line_item_is_made_when_the_launch_gave_none(lms, browser):
    link = lms.link(score=None)
    headers, placement_id = signed_in_headers(browser, lms, "can", link)
    with lms.store.session() as session:
        assert session.get(Placement, placement_id).line_item_url is None
    answered = __import__("requests").post(
        f"{lms.tool_url}/api/placements/{placement_id}/answers",
        json={"question_id": "rnn-advantage", "answer": 1},
        headers=headers,
    )
    assert answered.status_code == 201
    with lms.store.session() as session:
        user_id = session.scalar(select(User.id))
    assert (
        sync_pair(lms.store, lms.lti.catalog, AgsPoster(lms.lti), user_id, placement_id, 3).outcome
        is Synced.SENT
    )
    [item] = lms.platform.lineitems_of(link)
    assert item.score_maximum == 8.0 and item.resource_id == SEED
    with lms.store.session() as session:
        assert session.get(Placement, placement_id).line_item_url
    assert lms.platform.scores(item.id)[0].body["scoreGiven"] == 1.0


def sync_as_the_task_would(lms, poster, user_id, placement_id):
    """Run the sync; on WAIT (the LMS holds a score of this second), wait as the task's
    retry would, and run it again."""
    while True:
        result = sync_pair(lms.store, lms.lti.catalog, poster, user_id, placement_id, 3)
        if result.outcome is not Synced.WAIT:
            return result
        time.sleep(result.retry_in_s)


def test_service_tokens_are_cached_and_lms_outages_retry(lms, browser):
    link = lms.link()
    headers, placement_id = signed_in_headers(browser, lms, "ali", link)
    with lms.store.session() as session:
        user_id = session.scalar(select(User.id))
    poster = AgsPoster(lms.lti)
    for question, given in (("rnn-advantage", 1), ("weighted-average", "@")):
        answer(requests, lms, headers, placement_id, question, given)
        assert sync_as_the_task_would(lms, poster, user_id, placement_id).outcome is Synced.SENT
    assert lms.lti.tokens.requested == 1
    lms.platform.fail("ags", times=1, status=503)
    answer(requests, lms, headers, placement_id, "concepts", {})
    failed = sync_as_the_task_would(lms, poster, user_id, placement_id)
    assert failed.outcome is Synced.AWAY  # the platform's outage: it probes again in 2 s
    assert sync_as_the_task_would(lms, poster, user_id, placement_id).outcome is Synced.SENT
    with lms.store.session() as session:
        last = session.scalars(select(GradeSync).order_by(GradeSync.id.desc())).first()
        assert (last.status, last.attempts) == ("sent", 1)  # the outage counted no attempt
    assert lms.platform.scores(user="ali")[-1].body["scoreGiven"] == 2.0


def test_scores_within_one_second_reach_a_moodle_strict_lms_as_the_latest(lms, browser):
    link = lms.link()
    headers, placement_id = signed_in_headers(browser, lms, "ali", link)
    with lms.store.session() as session:
        user_id = session.scalar(select(User.id))
    poster = AgsPoster(lms.lti)
    answers = (("rnn-advantage", 1), ("weighted-average", "@"), ("concepts", {}))
    results = []
    for question, given in answers:
        answer(requests, lms, headers, placement_id, question, given)
        results.append(sync_pair(lms.store, lms.lti.catalog, poster, user_id, placement_id, 3))
    # whatever the second boundaries, a sync either posts or waits: none is refused
    assert {r.outcome for r in results} <= {Synced.SENT, Synced.WAIT}
    assert sync_as_the_task_would(lms, poster, user_id, placement_id).outcome in (
        Synced.SENT, Synced.NOTHING_TO_DO
    )  # fmt: skip
    scores = lms.platform.scores(user="ali")
    assert scores[-1].body["scoreGiven"] == 2.0  # the latest, in the LMS
    stamps = [s.body["timestamp"] for s in scores]
    assert stamps == sorted(set(stamps))  # strictly later, second by second


def test_roster_lists_students_who_never_launched(lms, browser):
    signed_in_headers(browser, lms, "ali", lms.link())
    with lms.store.session() as session:
        course_id = session.scalar(select(Course.id))
    synced = sync_roster(lms.lti, course_id)
    assert synced.members == 4 and synced.added == 3
    with lms.store.session() as session:
        rows = session.execute(
            select(User.name, Membership.teacher, Membership.seen_at).join(
                Membership, Membership.user_id == User.id
            )
        ).all()
    assert len(rows) == 4
    assert sum(1 for _, teacher, _ in rows if teacher) == 1
    assert sum(1 for _, _, seen in rows if seen is None) == 3


def test_dynamic_registration_end_to_end(lms, browser):
    register_url = registration.registration_url(lms.store, lms.tool_url, now=utcnow())
    url = lms.platform.start_registration(register_url)
    page = browser.get(url, timeout=10)
    assert page.status_code == 200, page.text[:500]
    assert "org.imsglobal.lti.close" in page.text
    platforms = registration.list_platforms(lms.store)
    assert len(platforms) == 2
    new = platforms[-1]
    assert new.issuer == lms.platform.issuer and new.client_id != lms.client_id
    assert new.deployment_ids and new.key_set_url == lms.platform.jwks_url
    tool = lms.platform.tool(new.client_id)
    assert tool.login_url == lms.tool_url + "/lti/login"
    used_again = browser.get(url, timeout=10)  # the registration token is one-time
    assert used_again.status_code >= 400


def test_key_rotation_keeps_the_platform_verifying(lms, browser):
    link = lms.link()
    headers, placement_id = signed_in_headers(browser, lms, "ali", link)
    old = lms.lti.keys.current()
    new = lms.lti.keys.rotate()
    kids = [k["kid"] for k in browser.get(lms.tool_url + "/lti/jwks").json()["keys"]]
    assert kids == [new.kid, old.kid]
    lms.lti.tokens.forget(1)
    with lms.store.session() as session:
        user_id = session.scalar(select(User.id))
    __import__("requests").post(
        f"{lms.tool_url}/api/placements/{placement_id}/answers",
        json={"question_id": "rnn-advantage", "answer": 1},
        headers=headers,
    )
    assert (
        sync_pair(lms.store, lms.lti.catalog, AgsPoster(lms.lti), user_id, placement_id, 3).outcome
        is Synced.SENT
    )


def test_canvas_configuration(lms, browser):
    config = browser.get(lms.tool_url + "/lti/config.json").json()
    placements = {p["placement"]: p for p in config["extensions"][0]["settings"]["placements"]}
    assert placements["link_selection"]["message_type"] == "LtiDeepLinkingRequest"
    assert placements["assignment_selection"]["message_type"] == "LtiDeepLinkingRequest"
    assert placements["course_navigation"]["message_type"] == "LtiResourceLinkRequest"
    assert config["oidc_initiation_url"] == lms.tool_url + "/lti/login"
    assert config["public_jwk_url"] == lms.tool_url + "/lti/jwks"


def test_platforms_need_https_except_on_loopback(lms):
    import pytest

    with pytest.raises(ValueError, match="https"):
        registration.add_platform(
            lms.store,
            PlatformFields(
                issuer="http://lms.example.org",
                client_id="c",
                deployment_ids=("d",),
                auth_login_url="https://lms.example.org/auth",
                auth_token_url="https://lms.example.org/token",
                key_set_url="https://lms.example.org/jwks",
            ),
        )
    with lms.store.session() as session:
        assert len(session.scalars(select(Platform)).all()) == 1


def _debug_last_error(lms):
    from service.store.models import GradeSync

    with lms.store.session() as session:
        return [s.last_error for s in session.scalars(select(GradeSync))]


def test_a_launched_page_may_be_framed_by_its_lms_and_nobody_else(lms, browser):
    trace = run_launch(browser, lms.platform.launch("ada", lms.link().id))
    page = follow(browser, trace.launch)
    assert "/teach/placements/" in page.url and page.status_code == 200
    csp = page.headers["Content-Security-Policy"]
    ancestors = re.search(r"frame-ancestors ([^;]+)", csp).group(1).split()
    demo = urlsplit(lms.platform.issuer)
    assert ancestors == ["'self'", f"{demo.scheme}://{demo.netloc}"]
