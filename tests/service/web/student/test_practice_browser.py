"""The Run button in a real browser (issue 30, points 1 and 2): keyboard only, with the input
box of a lesson whose program reads stdin, graded by a real worker on the configured sandbox
beside the demo LMS; no attempt spent, no score, nothing for the LMS, no hidden case shown;
the page passes the accessibility audit. With `--screenshots DIR` the run's screenshot
(practice-run.png) and the editor's with its input box (practice-input.png) go to DIR; by
default to a temporary directory."""

import time

import pytest
from sqlalchemy import func, select

from service.store.models import PracticeRun, Submission
from service.web import extensions
from testkit.lms import lms_with_a_worker
from testkit.servers import REPO
from tests.service.web import test_pages_browser as pages
from tests.service.web.a11y import assert_accessible
from tests.service.web.test_pages_browser import active, expect_text, launch

pytestmark = [pytest.mark.browser, pytest.mark.celery, pytest.mark.slow]

chromium = pages.chromium  # Debian's Chromium, through Playwright

POSITIONAL = "expert/positional-encoding"
SOLUTION = (REPO / "lessons" / POSITIONAL / "solution" / "model.py").read_text()
SEED_SOLUTION = pages.SOLUTION
ENDLESS = "while True:\n    pass\n"


@pytest.fixture
def lms(tmp_path, redis_server):
    """The tool beside the demo LMS, with a real redis-server and a real Celery worker."""
    with lms_with_a_worker(tmp_path, redis_server, "grade,sync") as found:
        yield found


def count(lms, model):
    with lms.store.session() as session:
        return session.scalar(select(func.count()).select_from(model))


def test_run_on_my_input_by_keyboard_spends_no_attempt(lms, chromium, screenshots):
    lms.link(lesson=POSITIONAL, title="A table of waves")
    exercise = extensions.catalog(lms.app).lesson(POSITIONAL).exercise
    five_six = next(case.output for case in exercise.cases if case.stdin == "5 6\n")
    hidden = [case.name for case in exercise.cases if case.hidden]
    page, frame, watch = launch(chromium, lms, "Ali Student")
    frame.locator("#exercise .cm-content").wait_for()  # the editor has taken the textarea's place
    expect_text(frame.locator("#score"), "0 of 8 points")
    box = frame.get_by_label("Input for Run (stdin)")
    assert box.input_value() == "3 4\n"  # the lesson's example, ready to run

    # keyboard only: Tab to the editor, write, Escape, Tab to the input box, write, Tab past
    # Submit to Run, Enter; the focus lands on the run's result when it arrives
    frame.locator("#exercise pre.expected").last.focus()
    page.keyboard.press("Tab")
    assert active(frame) == "editor"
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(SOLUTION)
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    assert active(frame) == "stdin"
    page.keyboard.press("Control+a")
    page.keyboard.insert_text("5 6\n")
    page.keyboard.press("Tab")
    assert active(frame) == "submit"
    page.keyboard.press("Tab")
    assert active(frame) == "run"
    pressed = time.monotonic()
    page.keyboard.press("Enter")
    result = frame.locator("#practice-result")
    expect_text(result.locator("h3"), "Practice run: Passed")
    shown_s = time.monotonic() - pressed
    frame.locator("#practice-result:focus").wait_for()
    assert active(frame) == "practice-result"
    expect_text(frame.locator("#practice-status"), "Practice run done: Passed")
    expect_text(result, "Not an attempt: it changes no score")
    output = result.get_by_role("region", name="Standard output on your input")
    assert output.inner_text().strip() == five_six.strip()
    expect_text(result, "4 of 4 cases passed")
    assert "points" not in result.inner_text()
    assert [name for name in hidden if name in result.inner_text()] == []

    # nothing counted: no attempt, no score, no submission, nothing posted to the LMS
    expect_text(frame.locator("#attempts-used"), "Attempts used: 0.")
    expect_text(frame.locator("#score"), "0 of 8 points")
    assert count(lms, Submission) == 0 and count(lms, PracticeRun) == 1
    assert lms.platform.scores() == []

    # the page alone: it shows the latest run (as a reload or a plain form post does), and
    # passes the audit with it
    lesson_url = frame.locator("#lesson").evaluate("() => window.location.href")
    alone = page.context.new_page()
    alone.set_viewport_size({"width": 900, "height": 1000})
    alone.goto(lesson_url)
    expect_text(alone.locator("#practice-result h3"), "Practice run: Passed")
    assert alone.get_by_label("Input for Run (stdin)").input_value() == "5 6\n"  # kept
    assert_accessible(alone, "the lesson page with a practice run")
    alone.locator("#practice-result").screenshot(path=str(screenshots / "practice-run.png"))
    alone.locator("#submit-form").screenshot(path=str(screenshots / "practice-input.png"))

    assert lms.worker.errors() == []
    assert watch.errors == []
    assert watch.outside() == [], f"requests left 127.0.0.1: {watch.outside()}"
    print(f"the run's result showed {shown_s * 1000:.0f} ms after Enter (polling included)")


def test_running_again_replaces_an_endless_run(lms, chromium):
    lms.link()  # the seed lesson: one output, no input of the student's
    page, frame, watch = launch(chromium, lms, "Ali Student")
    frame.locator("#exercise .cm-content").wait_for()
    assert frame.locator("#stdin").count() == 0  # the program reads no stdin: no box
    editor = frame.locator("#exercise .cm-content")
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(ENDLESS)
    frame.get_by_role("button", name="Run", exact=True).click()
    expect_text(frame.locator("#practice-status"), "Running your code (a practice run)…")
    editor.click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(SEED_SOLUTION)
    frame.get_by_role("button", name="Run", exact=True).click()
    # one sandbox at a time for the student: the new run waits until the endless one stops
    # (its one case, at its time limit; a run of several would stop at its next case)
    expect_text(frame.locator("#practice-status"), "Waiting for your previous run to stop…")
    expect_text(frame.locator("#practice-result h3"), "Practice run: Passed")
    with lms.store.session() as session:
        runs = session.execute(
            select(
                PracticeRun.run_status, PracticeRun.created_at, PracticeRun.finished_at
            ).order_by(PracticeRun.id)
        ).all()
    assert [run.run_status for run in runs] == ["timeout", "passed"]
    assert runs[0].finished_at >= runs[1].created_at  # the second waited for the first
    assert count(lms, Submission) == 0 and lms.platform.scores() == []
    assert lms.worker.errors() == []
    assert watch.errors == []
