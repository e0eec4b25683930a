"""A verdict's cases in a real browser: keyboard only, at 320 px, graded by a real worker.

The tool beside the demo LMS, a real redis-server and a real `codeblanks worker` on the
configured sandbox, as in tests/service/web/test_pages_browser.py; the catalog is the test's
own (tests/service/web/student/test_case_verdicts.py writes it). With `--screenshots DIR` the
verdict's screenshot (cases.png) goes to DIR; by default to a temporary directory.
"""

import pytest

from testkit.lms import lms_with_a_worker
from tests.service.web import test_pages_browser as pages
from tests.service.web.student.test_case_verdicts import CASES, SECRETS, write_catalog
from tests.service.web.test_pages_browser import active, expect_text, launch, no_sideways_scroll

pytestmark = [pytest.mark.browser, pytest.mark.celery, pytest.mark.slow]

chromium = pages.chromium  # Debian's Chromium, through Playwright

# right on "shout" and "length"; wrong on "two lines" (B comes out X) and on the hidden cases
PARTLY = """import sys


def size(text):
    return len(text)


def code(text):
    return text


if __name__ == "__main__":
    print(sys.stdin.read().upper().replace("B", "X"), end="")
"""


@pytest.fixture
def lms(tmp_path, redis_server):
    """The tool and the demo LMS on the test's catalog, with a real Celery worker."""
    lessons = write_catalog(tmp_path / "lessons")
    with lms_with_a_worker(tmp_path, redis_server, "grade,sync", lessons_dir=lessons) as found:
        yield found


def test_the_case_list_by_keyboard_at_320_px(lms, chromium, screenshots):
    lms.link(lesson=CASES, title="Shout", score=6.0)
    page, frame, watch = launch(chromium, lms, "Ali Student")
    frame.get_by_role("heading", name="What is checked").wait_for()
    frame.locator("#exercise .cm-content").wait_for()  # the editor has taken the textarea's place

    # keyboard only: from the last thing the exercise shows, Tab to the editor, write, Escape,
    # Tab past the input box for Run (the program reads stdin) to Submit, Enter; the focus
    # lands on the verdict when it arrives
    frame.locator("#exercise pre.expected").last.focus()
    page.keyboard.press("Tab")
    assert active(frame) == "editor"
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(PARTLY)
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    assert active(frame) == "stdin"
    page.keyboard.press("Tab")
    assert active(frame) == "submit"
    page.keyboard.press("Enter")
    verdict = frame.locator("#verdict")
    expect_text(verdict.locator("h3"), "Failed")
    expect_text(verdict, "2 of 5 cases passed — 3 of 6 points")
    frame.locator("#verdict:focus").wait_for()
    assert active(frame) == "verdict"
    expect_text(frame.locator("#run-status"), "Graded")

    cases = verdict.get_by_role("list", name="Cases")
    headings = [" ".join(h.split()) for h in cases.locator("h4").all_inner_texts()]
    assert headings == [
        "✔ shout — Passed",
        "✘ two lines — Failed",
        "✔ length — Passed",
        "✘ secret — Failed (hidden case)",
        "✘ secret value — Failed (hidden case)",
    ]
    two_lines = cases.locator("li", has_text="two lines")
    expect_text(two_lines, "First difference, on line 2 of the output:")
    assert two_lines.locator("dd pre").all_inner_texts()[:3] == [
        "stdin:\na\nb\n",
        "A\nB\n",
        "A\nX\n",
    ]
    expect_text(cases.locator("li", has_text="secret value"), "Hidden case 'secret value' failed.")
    # Tab from the verdict walks into the cases: the failing one's input is reachable
    page.keyboard.press("Tab")
    assert frame.locator(":focus").evaluate("e => e.tagName") in ("SUMMARY", "PRE")

    # the same page alone, 320 px wide: nothing scrolls sideways, long lines stay in their box
    lesson_url = frame.locator("#lesson").evaluate("() => window.location.href")
    alone = page.context.new_page()
    alone.set_viewport_size({"width": 320, "height": 900})
    alone.goto(lesson_url)
    expect_text(alone.locator("#verdict"), "2 of 5 cases passed")
    assert no_sideways_scroll(alone), "the lesson page scrolls sideways at 320 px"
    assert [s for s in SECRETS.values() if s in alone.content()] == []
    alone.locator("#verdict").scroll_into_view_if_needed()
    alone.locator("#verdict").screenshot(path=str(screenshots / "cases.png"))

    assert lms.worker.errors() == []
    assert watch.errors == []
    assert watch.outside() == [], f"requests left 127.0.0.1: {watch.outside()}"
