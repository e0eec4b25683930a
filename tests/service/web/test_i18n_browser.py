"""A Turkish user in a real browser: the LMS's language, sent with the launch, is the tool's.

The demo LMS sends `launch_presentation.locale` as Moodle and Canvas do; the browser itself
asks for English (Accept-Language en-US), so only the launch can make the pages Turkish. The
expected words are read from the compiled Turkish catalog, not written here twice.
"""

from __future__ import annotations

import pytest
from babel.support import Translations

from service.web.i18n import TRANSLATIONS
from tests.service.web import test_pages_browser as pages
from tests.service.web.test_pages_browser import (
    FAILING,
    SOLUTION,
    active,
    expect_text,
    launch,
)

pytestmark = [pytest.mark.browser, pytest.mark.celery, pytest.mark.slow]

# the end-to-end browser tests' fixtures: the tool beside the demo LMS with a worker, Chromium
lms, chromium = pages.lms, pages.chromium


@pytest.fixture(scope="module")
def tr():
    found = Translations.load(str(TRANSLATIONS), ["tr"])
    assert isinstance(found, Translations), "the Turkish catalog is not compiled"
    return found


def submit_code(page, frame, source, tr):
    """Put `source` in the editor in place of what is there, and press the Turkish Submit."""
    editor = frame.locator("#exercise .cm-content")
    editor.click()
    editor.press("Control+a")
    page.keyboard.insert_text(source)
    frame.get_by_role("button", name=tr.gettext("Submit")).click()


def test_a_turkish_launch_gets_turkish_pages_and_verdicts(lms, chromium, tr, screenshots):
    lms.link()
    page, frame, watch = launch(chromium, lms, "Ali Student", "tr")
    frame.get_by_role("heading", name="What is attention?", level=1).wait_for()  # as written
    assert frame.locator("html").get_attribute("lang") == "tr"
    expect_text(frame.locator("#score"), tr.gettext("Your score so far:"))
    assert tr.gettext("Submit") != "Submit"
    frame.get_by_role("button", name=tr.gettext("Submit")).wait_for()
    toc = frame.get_by_role("navigation", name=tr.gettext("On this page"))
    expect_text(toc, tr.gettext("Questions"))

    # a question answered: the script's words and number come in Turkish too
    question = frame.locator("#q-rnn-advantage")
    question.get_by_label("It relates distant positions").check()  # the author's words
    question.get_by_role("button", name=tr.gettext("Check answer")).click()
    expect_text(question.locator("[data-feedback]"), tr.gettext("Correct."))
    earned = tr.gettext("You earned {earned} of {possible} point.").format(earned=1, possible=1)
    expect_text(question.locator("[data-feedback]"), earned)

    # a wrong program: the verdict, its feedback and the live status, all Turkish
    submit_code(page, frame, FAILING, tr)
    verdict = frame.locator("#verdict")
    expect_text(verdict.locator("h3"), tr.gettext("Output differs"))
    expect_text(
        verdict, tr.gettext("Your program ran, but its output differs from the expected output.")
    )
    expect_text(verdict, tr.gettext("Expected"))
    expect_text(frame.locator("#run-status"), tr.gettext("Graded: {verdict}").split("{")[0])
    assert active(frame) == "verdict"  # focus moved to the verdict when it came
    # the same page in a window of its own: its URL carries the session, and so the language
    alone = page.context.new_page()
    alone.set_viewport_size({"width": 900, "height": 1100})
    alone.goto(frame.locator("#lesson").evaluate("() => window.location.href"))
    expect_text(alone.locator("#verdict h3"), tr.gettext("Output differs"))
    alone.locator("#exercise").screenshot(path=str(screenshots / "student-verdict-tr.png"))
    alone.close()

    submit_code(page, frame, SOLUTION, tr)
    expect_text(verdict.locator("h3"), tr.gettext("Passed"))
    expect_text(verdict, tr.gettext("Your program's output matches the expected output."))
    attempts = frame.locator("table.attempts tbody tr")
    expect_text(attempts.first, "%100")  # Turkish writes the percent sign first
    assert watch.errors == []

    # the teacher, the same LMS language: the lesson page and the gradebook speak Turkish
    page, frame, watch = launch(chromium, lms, "Ada Teacher", "tr")
    frame.get_by_role("heading", name=tr.gettext("Scores")).wait_for()
    course = frame.get_by_role("link", name=tr.gettext("Course gradebook")).first
    course.click()
    frame.get_by_role("heading", name=tr.gettext("Gradebook"), level=1).wait_for()
    expect_text(frame.locator("table.gradebook"), "Ali Student")
    page.locator("iframe.tool").screenshot(path=str(screenshots / "teacher-gradebook-tr.png"))
    assert watch.errors == []


def test_an_english_launch_stays_english_in_a_turkish_browser(lms, chromium, tr):
    lms.link()
    # the browser asks for Turkish; the LMS says English
    _, frame, _ = launch(chromium, lms, "Berna Student", "en", browser_locale="tr-TR")
    frame.get_by_role("button", name="Submit").wait_for()
    assert frame.locator("html").get_attribute("lang") == "en"
    assert tr.gettext("Check answer") not in frame.locator("body").inner_text()
