"""The student's lesson page and the teacher's gradebook in a real browser, end to end.

The tool and the demo LMS serve on their own loopback ports; Chromium opens the demo's
course page and launches from it, so the tool runs inside the LMS's iframe as it would in
Moodle. A real redis-server and a real `codeblanks worker` grade, post scores to the demo
LMS and read its roster, as in production.
"""

import csv
import io
import re
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from sqlalchemy import select

from service.store.models import GradeSync
from testkit.chromium import headless
from testkit.lms import lms_with_a_worker
from testkit.waits import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.celery, pytest.mark.slow]

FAILING = "print('not yet')\n"
SOLUTION = (Path(__file__).resolve().parents[3] / "lessons" / "expert" / "what-is-attention"
            / "solution" / "model.py").read_text()  # fmt: skip
TIMEOUT_MS = 30_000


@pytest.fixture
def lms(tmp_path, redis_server):
    """The tool beside the demo LMS, with a real redis-server and a real Celery worker."""
    with lms_with_a_worker(tmp_path, redis_server, "grade,sync,regrade") as found:
        yield found


@pytest.fixture
def chromium():
    with headless() as browser:
        yield browser


class Watch:
    """Every request a page makes, and every error it shows."""

    def __init__(self, page):
        self.requests: list[str] = []
        self.errors: list[str] = []
        page.on("request", lambda r: self.requests.append(r.url))
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on(
            "response",
            lambda r: self.errors.append(f"{r.status} {r.url}") if r.status >= 400 else None,
        )

    def outside(self) -> list[str]:
        return [
            url for url in self.requests
            if not re.match(r"(https?://127\.0\.0\.1(:\d+)?/|data:|about:blank)", url)
        ]  # fmt: skip


def launch(browser, lms, who: str, lang: str = "en", browser_locale: str = "en-US"):
    """Open the demo course page and launch the lesson as `who`; return page, frame, watch.

    `lang` is the demo user's language, which the launch sends as launch_presentation.locale;
    `browser_locale` the browser's own (its Accept-Language).
    """
    context = browser.new_context(viewport={"width": 1100, "height": 900}, locale=browser_locale)
    context.set_default_timeout(TIMEOUT_MS)
    # the demo LMS's pages name no icon, so Chromium asks for /favicon.ico (the tool's do)
    context.route("**/favicon.ico", lambda route: route.fulfill(status=204))
    page = context.new_page()
    watch = Watch(page)
    page.goto(f"{lms.demo.url}/demo/?lang={lang}")
    page.get_by_role("link", name=f"Launch as {who}").first.click()
    frame = page.frame_locator("iframe.tool")
    return page, frame, watch


def active(frame_or_page) -> str:
    return frame_or_page.locator(":focus").evaluate(
        "e => e.id || (e.closest('.cm-editor') ? 'editor' : e.tagName + ':' + e.textContent.trim())"
    )


def no_sideways_scroll(page) -> bool:
    return page.evaluate(
        "() => document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    )


def test_student_and_teacher_pages_end_to_end(lms, chromium, screenshots):
    started = time.monotonic()
    lms.link()  # "What is attention?", 8 points, in the demo course

    # ---- the student, inside the LMS iframe -------------------------------------------------
    page, frame, watch = launch(chromium, lms, "Ali Student")
    frame.get_by_role("heading", name="What is attention?", level=1).wait_for()
    assert frame.locator(".highlight .k, .highlight .n").count() > 0  # highlighted code
    expect_text(frame.locator("#score"), "0 of 8 points")

    # choice, with the mouse
    question = frame.locator("#q-rnn-advantage")
    question.get_by_label("It relates distant positions").check()
    question.get_by_role("button", name="Check answer").click()
    expect_text(question.locator("[data-feedback]"), "Correct.")
    expect_text(question.locator("[data-feedback]"), "In an RNN information")
    # blank, with the keyboard: type, Tab to its button, Enter
    blank = frame.locator("#q-weighted-average")
    blank.get_by_label("The missing part of").fill("@")
    blank.get_by_label("The missing part of").press("Tab")
    assert active(blank) == "BUTTON:Check answer"
    frame.locator(":focus").press("Enter")
    expect_text(blank.locator("[data-feedback]"), "Correct.")
    # match: a select per term, the meanings in sorted order
    match = frame.locator("#q-concepts")
    first = match.get_by_label("score", exact=True)
    options = first.locator("option").all_text_contents()[1:]
    assert options == sorted(options)
    pairs = {
        "score": "Similarity measure",
        "softmax": "Turns into weights",
        "value": "Carried information",
        "equal scores": "Plain mean",
    }
    for term, meaning in pairs.items():
        match.get_by_label(term, exact=True).select_option(meaning)
    match.get_by_role("button", name="Check answer").click()
    expect_text(match.locator("[data-feedback]"), "Correct.")
    expect_text(frame.locator("#score"), "3 of 8 points")

    # the editor: Tab from the expected output reaches it; Escape, Tab reaches Submit
    frame.locator("pre.expected").focus()
    frame.locator(":focus").press("Tab")
    assert active(frame) == "editor"
    editor = frame.locator("#exercise .cm-content")
    editor.press("Control+a")
    page.keyboard.insert_text(FAILING)
    expect_text(frame.locator("#draft-status"), "Draft saved")
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    assert active(frame) == "submit"
    page.keyboard.press("Enter")  # submits, followed live
    expect_text(frame.locator("#verdict h3"), "Output differs")
    verdict = frame.locator("#verdict")
    expect_text(verdict, "First difference, on line 1")
    expect_text(verdict, "[0.787 0.107 0.107]")
    expect_text(verdict, "not yet")
    expect_text(frame.locator("#run-status"), "Graded")
    expect_text(frame.locator("#results"), "Attempts used: 1")
    # the same page in a window of its own (the LMS may open it so)
    lesson_url = frame.locator("#lesson").evaluate("() => window.location.href")
    alone = page.context.new_page()
    alone_watch = Watch(alone)
    alone.set_viewport_size({"width": 900, "height": 1100})
    alone.goto(lesson_url)
    expect_text(alone.locator("#verdict h3"), "Output differs")
    alone.locator("#exercise").screenshot(path=str(screenshots / "student-verdict.png"))

    submit_code(page, frame, SOLUTION)
    expect_text(frame.locator("#verdict h3"), "Passed")
    expect_text(frame.locator("#score"), "8 of 8 points")
    attempts = frame.locator("table.attempts tbody tr")
    assert attempts.count() == 2
    expect_text(attempts.first, "Passed")
    assert "Sample solution" not in frame.locator("#results").inner_text()  # reveal: never

    # a reload shows everything as it was left
    alone.reload()
    assert alone.locator("#q-rnn-advantage input[value='1']").is_disabled()
    assert alone.locator("#q-rnn-advantage input[value='1']").is_checked()
    expect_text(alone.locator("#q-concepts [data-feedback]"), "Correct.")
    assert "np.allclose" in alone.locator("#exercise .cm-content").inner_text()  # the draft
    expect_text(alone.locator("#verdict h3"), "Passed")
    alone.screenshot(path=str(screenshots / "student-lesson.png"))
    alone.set_viewport_size({"width": 320, "height": 700})
    assert no_sideways_scroll(alone), "the lesson page scrolls sideways at 320 px"

    # the LMS has the grade
    wait_for(lambda: sync_statuses(lms) == {"sent"}, "the grade sync")
    assert lms.platform.scores(user="ali")[-1].body["scoreGiven"] == 8.0
    posted = len(lms.platform.scores(user="ali"))

    # ---- the teacher --------------------------------------------------------------------------
    teacher, tframe, twatch = launch(chromium, lms, "Ada Teacher")
    # the teacher's launch asked the worker to read the roster; the pages never wait for it
    wait_for(lambda: roster_read(lms), "the roster read in the background", timeout=30)
    tframe.get_by_role("link", name="Course gradebook").first.click()
    tframe.get_by_role("heading", name="Gradebook").wait_for()
    row = tframe.locator("table.gradebook tbody tr", has_text="Ali Student")
    expect_text(row, "8")
    expect_text(row, "LMS: sent")
    expect_text(tframe.locator("table.gradebook"), "Berna Student")  # from the LMS roster
    gradebook_url = tframe.locator("h1").evaluate("() => window.location.href")
    with teacher.expect_download() as download:
        tframe.get_by_role("link", name="Download CSV").click()
    table = list(csv.reader(io.StringIO(Path(download.value.path()).read_text())))
    assert table[0][:3] == ["Student", "Email", "What is attention? (out of 8)"]
    assert ["Ali Student", "ali.student@example.com", "8", "sent", ""] in table  # no override

    tab = teacher.context.new_page()
    tab_watch = Watch(tab)
    tab.goto(gradebook_url)
    tab.set_viewport_size({"width": 900, "height": 700})
    tab.screenshot(path=str(screenshots / "teacher-gradebook.png"))
    tab.set_viewport_size({"width": 320, "height": 700})
    assert no_sideways_scroll(tab), "the gradebook scrolls sideways at 320 px"

    # a regrade: progress, old and new scores, then send
    tframe.get_by_role("link", name="What is attention?").first.click()
    tframe.get_by_role("button", name="Regrade all submissions").click()
    expect_text(tframe.locator("body"), "2 submissions queued for regrading")
    tframe.get_by_role("button", name="Send the new scores to the LMS").wait_for()
    expect_text(tframe.locator("#regrade-progress"), "2 of 2 submissions regraded")
    tframe.locator("#send-scores:not([disabled])").wait_for()
    expect_text(tframe.locator("table.changes"), "same")
    tframe.get_by_role("button", name="Send the new scores to the LMS").click()
    expect_text(tframe.locator("body"), "New scores sent to the LMS for 1 student")
    wait_for(lambda: sync_statuses(lms) == {"sent"}, "the regrade's sync")
    assert len(lms.platform.scores(user="ali")) > posted
    assert lms.platform.scores(user="ali")[-1].body["scoreGiven"] == 8.0

    tab.set_viewport_size({"width": 900, "height": 1100})
    token = parse_qs(urlsplit(gradebook_url).query)["s"][0]
    tab.goto(f"{lms.tool_url}/teach/placements/{placement_of(lms)}?s={token}")
    expect_text(tab.locator("table.histogram-table"), "90–100%")
    tab.screenshot(path=str(screenshots / "teacher-placement.png"), full_page=True)

    assert lms.worker.errors() == []
    # the page followed its submissions live, the session in the stream's query
    assert any(re.search(r"/api/submissions/\d+/events\?s=", url) for url in watch.requests)
    for seen in (watch, alone_watch, twatch, tab_watch):
        assert seen.errors == []
        assert seen.outside() == [], f"requests left 127.0.0.1: {seen.outside()}"
    assert time.monotonic() - started < 90


def submit_code(page, frame, source):
    """Put `source` in the lesson's editor in place of what is there, and submit it."""
    editor = frame.locator("#exercise .cm-content")
    editor.click()
    editor.press("Control+a")
    page.keyboard.insert_text(source)
    frame.get_by_role("button", name="Submit").click()


def expect_text(locator, text):
    from playwright.sync_api import expect

    expect(locator).to_contain_text(text, timeout=TIMEOUT_MS)


def sync_statuses(lms):
    with lms.store.session() as session:
        return set(session.scalars(select(GradeSync.status)))


def roster_read(lms):
    from service.store.models import Course

    with lms.store.session() as session:
        return session.scalar(select(Course.roster_read_at)) is not None


def placement_of(lms):
    from service.store.models import Placement

    with lms.store.session() as session:
        return session.scalar(select(Placement.id))
