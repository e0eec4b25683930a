"""A verdict's figure in a real browser, inside the demo LMS's frame, graded by a real worker:
the heat-map lesson's solution draws its map, which shows under the case that drew it, loads
through the page's link token, has its text alternative, is reached by keyboard, and the page
passes the axe audit. With `--screenshots DIR` the verdict's screenshot (figure-verdict.png)
goes to DIR; by default to a temporary directory."""

from pathlib import Path

import pytest

from testkit.lms import lms_with_a_worker
from tests.service.web import test_pages_browser as pages
from tests.service.web.a11y import assert_accessible
from tests.service.web.test_pages_browser import active, expect_text, launch, submit_code

pytestmark = [pytest.mark.browser, pytest.mark.celery, pytest.mark.slow]

chromium = pages.chromium  # Debian's Chromium, through Playwright

LESSON = "expert/attention-heatmap"
SOLUTION = Path(__file__).resolve().parents[4] / "lessons" / LESSON / "solution" / "model.py"
ALT = "Dikkat ağırlıkları, x: anahtar (bakılan kelime), y: sorgu (bakan kelime)"


@pytest.fixture
def lms(tmp_path, redis_server):
    """The tool and the demo LMS with a real Celery worker on the configured sandbox."""
    with lms_with_a_worker(tmp_path, redis_server, "grade,sync") as found:
        yield found


def test_the_figure_shows_under_its_case_with_its_text_and_by_keyboard(lms, chromium, screenshots):
    lms.link(lesson=LESSON, title="Seeing attention", score=8.0)
    page, frame, watch = launch(chromium, lms, "Ali Student")
    frame.locator("#exercise .cm-content").wait_for()
    submit_code(page, frame, SOLUTION.read_text())
    verdict = frame.locator("#verdict")
    expect_text(verdict, "7 of 7 cases passed")
    frame.locator("#verdict:focus").wait_for()

    case = verdict.get_by_role("list", name="Cases").locator("li", has_text="the lesson's sentence")
    image = case.get_by_role("img", name=ALT)
    image.wait_for()
    assert image.evaluate("img => img.complete && img.naturalWidth") == 640  # it loaded
    expect_text(case.locator("figcaption"), "Figure 1 of case the lesson's sentence")
    assert verdict.locator("img").count() == 1  # the value cases drew no figure

    # keyboard only: from the verdict, Tab reaches the figure's link, named by its text
    for _ in range(60):
        page.keyboard.press("Tab")
        if frame.locator(":focus").evaluate("e => !!e.closest('figure')"):
            break
    else:
        pytest.fail(f"Tab never reached the figure (focus ended on {active(frame)})")
    focused = frame.locator(":focus")
    assert focused.evaluate("e => e.tagName") == "A"
    assert focused.get_attribute("href").startswith(image.get_attribute("src").split("?")[0])

    tool = page.locator("iframe.tool").element_handle().content_frame()
    assert_accessible(tool, "a verdict with a figure")
    case.scroll_into_view_if_needed()
    case.screenshot(path=str(screenshots / "figure-verdict.png"))
    assert lms.worker.errors() == []
    assert watch.errors == []
    assert watch.outside() == [], f"requests left 127.0.0.1: {watch.outside()}"


def test_a_run_shows_its_figure_and_an_attempt_opened_in_place_its_own(lms, chromium, screenshots):
    lms.link(lesson=LESSON, title="Seeing attention", score=8.0)
    page, frame, watch = launch(chromium, lms, "Ali Student")
    frame.locator("#exercise .cm-content").wait_for()
    submit_code(page, frame, SOLUTION.read_text())
    expect_text(frame.locator("#verdict"), "7 of 7 cases passed")

    # Run the same code: the practice run's map shows under the visible case that drew it
    frame.locator("#run").focus()
    page.keyboard.press("Enter")
    result = frame.locator("#practice-result")
    expect_text(result.locator("h3"), "Practice run: Passed")
    frame.locator("#practice-result:focus").wait_for()
    case = result.get_by_role("list", name="Cases of the practice run").locator(
        "li", has_text="the lesson's sentence"
    )
    ran = case.get_by_role("img", name=ALT)
    ran.wait_for()
    assert ran.evaluate("img => img.complete && img.naturalWidth") == 640  # it loaded
    assert result.locator("img").count() == 1
    verdict_src = frame.locator("#verdict img").get_attribute("src").split("?")[0]
    assert ran.get_attribute("src").split("?")[0] != verdict_src  # the run's own figure

    # the attempt opened in place shows the verdict's figure again, with ids of its own
    frame.get_by_role("link", name="Show attempt 1").click()
    shown = frame.locator("#attempt-shown")
    shown.get_by_role("img", name=ALT).wait_for()
    assert shown.locator("img").get_attribute("src").split("?")[0] == verdict_src
    tool = page.locator("iframe.tool").element_handle().content_frame()
    ids = tool.evaluate("() => [...document.querySelectorAll('[id]')].map(e => e.id)")
    assert sorted({i for i in ids if ids.count(i) > 1}) == []  # a caption names one figure
    assert_accessible(tool, "a run, a verdict and an attempt, each with its figure")
    result.screenshot(path=str(screenshots / "figure-practice-run.png"))
    assert lms.worker.errors() == []
    assert watch.errors == []
