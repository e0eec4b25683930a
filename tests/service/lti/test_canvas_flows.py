"""The real tool against the demo LMS playing Canvas (demo/personalities.py CANVAS), over HTTP.

Registration by a developer key's JSON and `codeblanks platforms add`, and by dynamic
registration; deep linking; student and teacher launches; graded answers through a real
Celery worker over a real redis-server, whose scores reach Canvas with its submission
extension; NRPS across Canvas's 50-member pages; scores Canvas refuses for good (a teacher, an
unpublished assignment) failed at once and said why; a 403 throttle waited out.
"""

from datetime import UTC, datetime
from urllib.parse import urljoin

import pytest
import requests
from sqlalchemy import select

from demo import DemoServer, lms_ags
from demo.browser import parse_form, run_launch
from service.lti import registration
from service.lti.ags import AgsPoster
from service.lti.roster import sync_roster
from service.store.models import Course, GradeSync, Membership, Platform, User, utcnow
from testkit.lms import Lms, answer, lms_with_a_worker, make_lms, register, signed_in_headers
from testkit.waits import wait_for
from tests.service.lti.test_flows import SEED, picker_form
from tests.service.lti.test_results import teacher_url
from tests.service.sessions import text_of
from workers.syncing import Synced, sync_pair

pytestmark = [pytest.mark.celery, pytest.mark.slow]

CANVAS_SUBMISSION = "https://canvas.instructure.com/lti/submission"
CANVAS = {"personality": "canvas", "registration_by": "developer_key", "learners": 50}


@pytest.fixture
def canvas(tmp_path, redis_server):
    """The tool, a Canvas with 54 people (two NRPS pages), registered by developer key."""
    with lms_with_a_worker(tmp_path, redis_server, "grade,sync", CANVAS) as found:
        yield found


def syncs(lms: Lms, who: str) -> list[GradeSync]:
    with lms.store.session() as session:
        user = session.scalar(select(User).where(User.name.like(f"{who}%")))
        rows = session.scalars(select(GradeSync).where(GradeSync.user_id == user.id)).all()
        session.expunge_all()
        return list(rows)


def settled(lms: Lms, who: str) -> GradeSync:
    """Wait until `who`'s latest grade sync is sent or failed; return it."""

    def done() -> GradeSync | None:
        rows = syncs(lms, who)
        last = rows[-1] if rows else None
        return last if last is not None and last.status in ("sent", "failed") else None

    return wait_for(done, f"{who}'s grade sync to settle", 90)


def test_a_developer_key_registration_launches_grades_and_refuses_a_teacher(canvas, tmp_path):
    platform = canvas.platform
    with canvas.store.session() as session:
        row = session.scalar(select(Platform))
        assert row.issuer == "https://canvas.instructure.com" and row.name == "Our Canvas"
    link = canvas.link()
    with requests.Session() as ali:
        headers, placement_id = signed_in_headers(ali, canvas, "ali", link)
        assert answer(ali, canvas, headers, placement_id).status_code == 201
    sent = settled(canvas, "Ali")
    assert sent.status == "sent", sent.last_error
    [item] = platform.lineitems_of(link)
    # on the link's own item: the background self-test of this never-tested key may post ali
    # a score of its own on its throwaway item meanwhile
    [score] = platform.scores(item.id, user="ali")
    extension = score.body[CANVAS_SUBMISSION]
    assert extension["new_submission"] is True
    assert extension["submission_type"] == "basic_lti_launch"
    assert extension["submitted_at"] == score.body["timestamp"]
    assert lms_ags.attempts(platform, item, "demo-ali") == 1

    # the teacher's own answer: Canvas takes grades of students only, 422; failed at once
    with requests.Session() as ada:
        headers, placement_id = signed_in_headers(ada, canvas, "ada", link)
        assert answer(ada, canvas, headers, placement_id).status_code == 201
    failed = settled(canvas, "Ada")
    assert failed.status == "failed" and failed.attempts == 1  # no retry can help
    assert "students only" in failed.last_error and "422" in failed.last_error
    assert [s.user_id for s in platform.scores(item.id)] == ["demo-ali"]  # none kept for Ada


def test_a_deep_linked_assignment_starts_unpublished_and_its_score_fails_until_published(
    canvas,
):
    platform = canvas.platform
    with requests.Session() as ada:
        trace = run_launch(ada, platform.deep_link("ada", canvas.client_id))
        assert trace.launch.status_code == 200
        action, token = picker_form(trace.launch.text)
        picked = ada.post(
            urljoin(canvas.tool_url, action), data={"lesson": [SEED], "csrf": token}, timeout=30
        )
        form = parse_form(picked.text, canvas.tool_url)
        assert ada.post(form.action, data=form.fields, timeout=30).status_code == 200
    [link] = platform.links()
    [item] = platform.lineitems_of(link)
    assert item.id in platform.unpublished  # deep_linking_modules.rb: workflow_state unpublished
    with requests.Session() as berna:
        headers, placement_id = signed_in_headers(berna, canvas, "berna", link)
        assert answer(berna, canvas, headers, placement_id).status_code == 201
    failed = settled(canvas, "Berna")
    assert failed.status == "failed" and failed.attempts == 1
    assert "unpublished" in failed.last_error and "publish it" in failed.last_error
    # none on the assignment (the background self-test of this never-tested key may post
    # one of its own on its throwaway line item meanwhile)
    assert platform.scores(item.id) == []
    # the teacher sees why on the lesson's page, in our words, not Canvas's
    page = text_of(requests.get(teacher_url(canvas, link), timeout=30).text)
    assert "the assignment is unpublished in the LMS: publish it there" in page
    assert "This assignment is still unpublished" not in page


def test_the_roster_is_read_across_canvas_pages(canvas):
    with requests.Session() as ali:
        signed_in_headers(ali, canvas, "ali", canvas.link())
    with canvas.store.session() as session:
        course_id = session.scalar(select(Course.id))
    synced = sync_roster(canvas.lti, course_id)
    # 54 people: Canvas's first page holds 50 (names_and_roles_controller.rb), the rest come
    # by its Link rel="next"
    assert synced.members == 54 and synced.added == 53
    assert canvas.platform.knobs.hits["nrps"] == 2
    with canvas.store.session() as session:
        assert len(session.scalars(select(Membership)).all()) == 54


def test_a_throttled_score_waits_and_is_delivered(canvas):
    platform = canvas.platform
    link = canvas.link()
    platform.throttle(2, client_id=canvas.client_id)  # Canvas's 403, no Retry-After
    with requests.Session() as can:
        headers, placement_id = signed_in_headers(can, canvas, "can", link)
        assert answer(can, canvas, headers, placement_id).status_code == 201
    sent = settled(canvas, "Can")
    assert sent.status == "sent", sent.last_error
    assert sent.attempts == 1  # the throttle counted no attempt: the platform was away
    assert platform.knobs.hits["throttled"] == 2
    [item] = platform.lineitems_of(link)
    assert [s.user_id for s in platform.scores(item.id)] == ["demo-can"]


def test_dynamic_registration_with_canvas_meets_its_deployment_at_the_first_launch(tmp_path):
    lms, server = make_lms(tmp_path, personality="canvas")
    try:
        url = registration.registration_url(lms.store, lms.tool_url, now=utcnow())
        with requests.Session() as admin:
            page = admin.get(lms.platform.start_registration(url), timeout=30)
        assert page.status_code == 200 and "org.imsglobal.lti.close" in page.text
        new = registration.list_platforms(lms.store)[-1]
        assert new.issuer == "https://canvas.instructure.com" and new.client_id != lms.client_id
        assert new.deployment_ids == () and new.auto_add_deployments  # none in the answer
        # its configuration names "canvas.instructure.com" as authorization_server, but its
        # token endpoint wants the token URL as aud: no token audience
        assert new.token_audience is None
        tool = lms.platform.tool(new.client_id)
        link = lms.platform.add_link(tool.client_id, "Attention", custom={"lesson": SEED})
        with requests.Session() as ali:
            trace = run_launch(ali, lms.platform.launch("ali", link.id))
        assert "/lessons/" in trace.launch.headers["Location"]
        again = [p for p in registration.list_platforms(lms.store) if p.client_id == tool.client_id]
        assert again[0].deployment_ids == (tool.deployment_id,)
    finally:
        lms.demo.stop()
        server.stop()
        lms.store.dispose()


def test_two_schools_on_the_shared_issuer_stay_apart(tmp_path):
    other = DemoServer(tmp_path / "school-b", personality="canvas")
    other.start()
    lms, server = make_lms(tmp_path, allow=other.url.removeprefix("http://"), personality="canvas")
    try:
        school_b = register(other, lms.app, lms.tool_url)
        assert school_b.platform.issuer == lms.platform.issuer  # one issuer, two client ids
        for school, who in ((lms, "ali"), (school_b, "berna")):
            link = school.link()
            with requests.Session() as browser:
                signed_in_headers(browser, school, who, link)
        with lms.store.session() as session:
            rows = session.execute(
                select(Platform.client_id, User.name)
                .join(Course, Course.platform_id == Platform.id)
                .join(Membership, Membership.course_id == Course.id)
                .join(User, User.id == Membership.user_id)
            ).all()
        assert sorted(rows) == sorted(
            [(lms.client_id, "Ali Student"), (school_b.client_id, "Berna Student")]
        )
    finally:
        other.stop()
        lms.demo.stop()
        server.stop()
        lms.store.dispose()


def test_a_score_stamped_before_the_one_canvas_holds_goes_again_a_second_later(tmp_path):
    lms, server = make_lms(tmp_path, personality="canvas")
    try:
        link = lms.link()
        with requests.Session() as ali:
            headers, placement_id = signed_in_headers(ali, lms, "ali", link)
            assert answer(ali, lms, headers, placement_id).status_code == 201
        [item] = lms.platform.lineitems_of(link)
        # Canvas holds a result stamped later in this second (a post whose answer was lost):
        # the tool's whole-second timestamp is earlier, and Canvas answers 400
        now = datetime.now(UTC)
        held = now.replace(microsecond=999000).isoformat()
        body = {"userId": "demo-ali", "timestamp": held, "gradingProgress": "Pending"}
        lms.platform.records.add_score(item.id, "demo-ali", body, whole=False)
        with lms.store.session() as session:
            user_id = session.scalar(select(User.id))
        result = sync_pair(lms.store, lms.lti.catalog, AgsPoster(lms.lti), user_id, placement_id, 3)
        assert result.outcome is Synced.SENT
        latest = lms.platform.scores(item.id)[-1].body
        assert latest["scoreGiven"] == 1.0 and latest["timestamp"] > held
    finally:
        lms.demo.stop()
        server.stop()
        lms.store.dispose()


def test_a_key_without_the_results_scope_still_takes_scores(tmp_path):
    lms, server = make_lms(tmp_path, personality="canvas")
    try:
        # the admin unticked "results" on the key's review page: Canvas then refuses any
        # token that asks for it, whatever else it asks for
        lms.platform.untick(
            lms.client_id, "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly"
        )
        link = lms.link(score=None)  # no column yet: the tool creates it, then scores
        with requests.Session() as ali:
            headers, placement_id = signed_in_headers(ali, lms, "ali", link)
            assert answer(ali, lms, headers, placement_id).status_code == 201
        with lms.store.session() as session:
            user_id = session.scalar(select(User.id))
        result = sync_pair(lms.store, lms.lti.catalog, AgsPoster(lms.lti), user_id, placement_id, 3)
        assert result.outcome is Synced.SENT
        [item] = lms.platform.lineitems_of(link)
        assert lms.platform.scores(item.id)[0].body["scoreGiven"] == 1.0
    finally:
        lms.demo.stop()
        server.stop()
        lms.store.dispose()
