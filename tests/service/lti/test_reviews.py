"""The way back from the LMS gradebook, over real HTTP between the tool and the demo LMS.

Moodle's gradebook link for one student sends an LtiSubmissionReviewRequest naming them in
`for_user`; Canvas launches the URL a score's submission extension gave. Either opens, for
a teacher, that student's work on the lesson and, for a student, their own lesson page.
"""

import re
from urllib.parse import urljoin, urlsplit

import jwt
import requests
from sqlalchemy import select

from core.lesson_scores import LessonScore
from core.platforms import ScorePost
from demo.browser import parse_form, run_launch
from service.lti.ags import CANVAS_SUBMISSION, AgsPoster
from service.store.models import Placement, Platform, User, utcnow
from testkit.lms import answer, signed_in_headers
from workers.syncing import Synced, sync_pair

FOR_USER = "https://purl.imsglobal.org/spec/lti/claim/for_user"
MESSAGE_TYPE = "https://purl.imsglobal.org/spec/lti/claim/message_type"
TARGET = "https://purl.imsglobal.org/spec/lti/claim/target_link_uri"
SEED = "expert/what-is-attention"


def follow(browser, response):
    assert response.status_code in (302, 303), (response.status_code, response.text[:500])
    return browser.get(urljoin(response.url, response.headers["Location"]), timeout=10)


def user_id(lms, who):
    with lms.store.session() as session:
        return session.scalar(select(User.id).where(User.sub == lms.platform.user_sub(who)))


def answered_once(lms, who, link):
    """Launch `who` into the link and answer its first question (right); return the placement."""
    with requests.Session() as own:
        headers, placement_id = signed_in_headers(own, lms, who, link)
        assert answer(own, lms, headers, placement_id).status_code == 201
    return placement_id


def text_of(page):
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))


def test_a_teachers_review_opens_that_students_work_on_the_lesson(lms, browser):
    link = lms.link()
    placement_id = answered_once(lms, "ali", link)
    answered_once(lms, "berna", link)
    trace = run_launch(browser, lms.platform.review("ada", link.id, "ali"))
    assert trace.form.claims[MESSAGE_TYPE] == "LtiSubmissionReviewRequest"
    assert trace.form.claims[FOR_USER]["user_id"] == lms.platform.user_sub("ali")
    location = urlsplit(trace.launch.headers["Location"]).path
    assert location == f"/teach/placements/{placement_id}/students/{user_id(lms, 'ali')}"
    page = follow(browser, trace.launch)
    assert page.status_code == 200
    shown = text_of(page.text)
    assert "Ali Student" in shown and "Berna" not in shown
    assert "Take the weighted average of the values. @ 1 of 1" in shown  # his answer, scored


def test_a_students_review_of_their_own_work_opens_their_lesson(lms, browser):
    link = lms.link()
    placement_id = answered_once(lms, "ali", link)
    trace = run_launch(browser, lms.platform.review("ali", link.id, "ali"))
    assert urlsplit(trace.launch.headers["Location"]).path == f"/lessons/{placement_id}"
    page = follow(browser, trace.launch)
    assert page.status_code == 200 and "What is attention?" in page.text


def test_a_student_asking_for_anothers_work_is_refused_plainly(lms, browser):
    link = lms.link()
    answered_once(lms, "ali", link)
    answered_once(lms, "berna", link)
    # the demo LMS, as Moodle, sends a student's review of their own work only: a platform
    # that named another student would be tampered with, or broken
    berna = lms.platform.user_sub("berna")

    def as_for_berna(claims):
        claims[FOR_USER]["user_id"] = berna

    trace = run_launch(
        browser,
        lms.platform.review("ali", link.id, "ali"),
        authorize=lambda params: lms.platform.authorize(params, mutate=as_for_berna),
    )
    assert trace.launch.status_code == 403
    assert "Not your work" in trace.launch.text
    assert "only their own work" in text_of(trace.launch.text)
    assert "Berna" not in trace.launch.text and "Location" not in trace.launch.headers
    # and no session was started by it: the tool's pages stay closed to this browser
    assert browser.get(f"{lms.tool_url}/teach/courses/1", timeout=10).status_code in (401, 403)


def test_a_review_of_a_link_without_a_lesson_is_refused_with_a_page(lms, browser):
    link = lms.link(lesson=None)  # in the LMS, but the tool never placed a lesson there
    trace = run_launch(browser, lms.platform.review("ada", link.id, "ali"))
    assert trace.launch.status_code == 404
    assert "No lesson here yet" in trace.launch.text
    # and the review placed nothing: it only opens work there is
    assert lms.counts()[3] == 0


def test_a_review_of_a_student_the_tool_never_saw_is_refused_with_a_page(lms, browser):
    link = lms.link()
    answered_once(lms, "ali", link)
    trace = run_launch(browser, lms.platform.review("ada", link.id, "can"))
    assert trace.launch.status_code == 404
    assert "Unknown student" in trace.launch.text
    assert lms.platform.user_sub("can") in trace.launch.text


def test_a_review_without_for_user_is_refused(lms, browser):
    link = lms.link()
    answered_once(lms, "ali", link)

    def without_for_user(claims):
        del claims[FOR_USER]

    trace = run_launch(
        browser,
        lms.platform.review("ada", link.id, "ali"),
        authorize=lambda params: lms.platform.authorize(params, mutate=without_for_user),
    )
    assert trace.launch.status_code == 400 and "for_user" in trace.launch.text


def test_a_review_launch_is_a_launch_its_id_token_works_once(lms, browser):
    link = lms.link()
    answered_once(lms, "ali", link)
    trace = run_launch(browser, lms.platform.review("ada", link.id, "ali"))
    assert trace.launch.status_code == 302
    replayed = browser.post(trace.form.action, data=trace.form.fields, allow_redirects=False)
    assert replayed.status_code in (400, 403) and "Location" not in replayed.headers


def test_line_items_the_tool_makes_declare_the_submission_review(lms, browser):
    link = lms.link(score=None)  # the LMS gave no line item: the tool creates it
    placement_id = answered_once(lms, "can", link)
    poster = AgsPoster(lms.lti)
    sync = sync_pair(lms.store, lms.lti.catalog, poster, user_id(lms, "can"), placement_id, 3)
    assert sync.outcome is Synced.SENT
    [item] = lms.platform.lineitems_of(link)
    review = item.submission_review
    assert review is not None and review["url"] == f"{lms.tool_url}/lti/review"
    assert review["reviewableStatus"] == ["Submitted", "Completed"] and review["label"]
    # the gradebook's review link now targets the declared URL, and it opens Can's work
    trace = run_launch(browser, lms.platform.review("ada", link.id, "can"))
    assert trace.form.claims[TARGET] == f"{lms.tool_url}/lti/review"
    assert urlsplit(trace.launch.headers["Location"]).path.endswith(
        f"/students/{user_id(lms, 'can')}"
    )


def test_deep_linked_line_items_declare_the_submission_review(lms, browser):
    trace = run_launch(browser, lms.platform.deep_link("ada", lms.client_id))
    action = re.search(r'action="([^"]+)"', trace.launch.text).group(1).replace("&amp;", "&")
    token = re.search(r'name="csrf" value="([^"]+)"', trace.launch.text).group(1)
    picked = browser.post(urljoin(lms.tool_url, action), data={"lesson": [SEED], "csrf": token})
    form = parse_form(picked.text, lms.tool_url)
    claims = jwt.decode(form.fields["JWT"], options={"verify_signature": False})
    [item] = claims["https://purl.imsglobal.org/spec/lti-dl/claim/content_items"]
    assert item["lineItem"]["submissionReview"] == {
        "reviewableStatus": ["Submitted", "Completed"],
        "label": "Attempts in CodeBlanks",
        "url": f"{lms.tool_url}/lti/review",
    }
    assert browser.post(form.action, data=form.fields, timeout=10).status_code == 200
    [link] = lms.platform.links()
    [kept] = lms.platform.lineitems_of(link)
    assert kept.submission_review == item["lineItem"]["submissionReview"]
    initiation = lms.platform.review("ada", link.id, "ali")
    assert initiation.params["target_link_uri"] == f"{lms.tool_url}/lti/review"


def test_canvas_scores_carry_the_review_url_which_opens_the_same_page(lms, browser):
    link = lms.link()
    placement_id = answered_once(lms, "ali", link)
    with lms.store.session() as session:
        placement = session.get(Placement, placement_id)
        platform_id, line_item_url = session.scalar(select(Platform.id)), placement.line_item_url
    sub = lms.platform.user_sub("ali")
    post = ScorePost(
        platform_id, line_item_url, sub, LessonScore(1.0, 8.0), utcnow(), canvas=True
    )  # canvas: what a Canvas issuer (instructure.com) turns on
    AgsPoster(lms.lti).post(post)
    [score] = lms.platform.scores(user="ali")
    extension = score.body[CANVAS_SUBMISSION]
    assert extension["submission_type"] == "basic_lti_launch"
    target = extension["submission_data"]
    assert target == f"{lms.tool_url}/lti/review?for_user={sub}"

    # SpeedGrader launches that URL as the teacher, on the assignment's resource link
    def to_the_submission(claims):
        claims[TARGET] = target

    def launch(who):
        return run_launch(
            browser,
            lms.platform.launch(who, link.id),
            authorize=lambda params: lms.platform.authorize(params, mutate=to_the_submission),
        ).launch

    teacher = launch("ada")
    assert urlsplit(teacher.headers["Location"]).path == (
        f"/teach/placements/{placement_id}/students/{user_id(lms, 'ali')}"
    )
    assert follow(browser, teacher).status_code == 200
    # the student's own submission details open their lesson; another's are refused
    assert urlsplit(launch("ali").headers["Location"]).path == f"/lessons/{placement_id}"
    answered_once(lms, "berna", link)
    other = launch("berna")
    assert other.status_code == 403 and "Not your work" in other.text
